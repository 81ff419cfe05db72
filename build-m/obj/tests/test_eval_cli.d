build-m/obj/tests/test_eval_cli.o: tests/test_eval_cli.c tests/runner.h \
 trainer/data/labels.h trainer/base/batch.h trainer/base/classes.h \
 trainer/data/image_decode.h trainer/data/image_encode.h \
 trainer/cmd/plot_png.h trainer/base/error.h \
 trainer/cmd/thresholds_file.h trainer/train/eval_thresholds.h
tests/runner.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/image_decode.h:
trainer/data/image_encode.h:
trainer/cmd/plot_png.h:
trainer/base/error.h:
trainer/cmd/thresholds_file.h:
trainer/train/eval_thresholds.h:
