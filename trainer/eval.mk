# trainer/eval.mk - evaluation a reviewer can trust (issue 16): bootstrap
# intervals, curves, calibration, thresholds and their file, the report,
# plots (cairo) and class activation maps. Sources join libchexnet through
# $(EVAL_SRCS) (trainer/module.mk); the plots need cairo (HAVE_CAIRO,
# detected like every dependency; without it --plots is refused).

EVAL_SRCS := trainer/eval/bootstrap.c trainer/eval/curves.c \
	trainer/eval/calibration.c trainer/eval/thresholds.c \
	trainer/eval/thresholds_file.c trainer/cmd/eval_report.c trainer/cmd/eval_command.c \
	trainer/cmd/plot_png.c trainer/cmd/predict_output.c trainer/cmd/out_dir.c \
	trainer/model/features.c trainer/eval/cam.c trainer/eval/cam_score.c \
	trainer/cmd/cam_png.c trainer/cmd/cam_names.c trainer/cmd/predict_cam.c trainer/cmd/locate.c \
	trainer/cmd/curves.c trainer/cmd/curves_png.c
EVAL_LDLIBS :=
ifeq ($(HAVE_CAIRO),1)
EVAL_SRCS += trainer/cmd/png_canvas.c
$(B)/obj/trainer/cmd/plot_png.o $(B)/obj/trainer/cmd/cam_png.o \
$(B)/obj/trainer/cmd/curves_png.o $(B)/obj/trainer/cmd/png_canvas.o: MODULE_CFLAGS = -Itrainer \
	$(CJSON_CFLAGS) $(CAIRO_CFLAGS) -DHAVE_CAIRO
EVAL_LDLIBS += $(CAIRO_LIBS)
endif
EVAL_TEST_SRCS := tests/test_eval_stats.c tests/test_eval_cli.c tests/test_cam.c
TEST_SRCS += $(EVAL_TEST_SRCS)
