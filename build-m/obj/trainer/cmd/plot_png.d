build-m/obj/trainer/cmd/plot_png.o: trainer/cmd/plot_png.c \
 trainer/cmd/plot_png.h trainer/base/error.h /usr/include/cairo/cairo.h \
 /usr/include/cairo/cairo-version.h /usr/include/cairo/cairo-features.h \
 /usr/include/cairo/cairo-deprecated.h trainer/train/auroc.h \
 trainer/data/labels.h trainer/base/batch.h trainer/base/classes.h \
 trainer/train/eval_curves.h trainer/cmd/eval_report.h \
 trainer/train/eval_bootstrap.h trainer/train/eval_calibration.h \
 trainer/train/eval_thresholds.h trainer/cmd/common.h \
 trainer/base/clock.h trainer/backend/backend.h trainer/model/model.h \
 trainer/cmd/cli.h trainer/train/optim.h trainer/train/hooks.h \
 trainer/train/progress.h trainer/train/schedule.h trainer/data/loader.h \
 trainer/base/rng.h trainer/cmd/thresholds_file.h
trainer/cmd/plot_png.h:
trainer/base/error.h:
/usr/include/cairo/cairo.h:
/usr/include/cairo/cairo-version.h:
/usr/include/cairo/cairo-features.h:
/usr/include/cairo/cairo-deprecated.h:
trainer/train/auroc.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/train/eval_curves.h:
trainer/cmd/eval_report.h:
trainer/train/eval_bootstrap.h:
trainer/train/eval_calibration.h:
trainer/train/eval_thresholds.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/backend/backend.h:
trainer/model/model.h:
trainer/cmd/cli.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/train/progress.h:
trainer/train/schedule.h:
trainer/data/loader.h:
trainer/base/rng.h:
trainer/cmd/thresholds_file.h:
