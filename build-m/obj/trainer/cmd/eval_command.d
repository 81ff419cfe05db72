build-m/obj/trainer/cmd/eval_command.o: trainer/cmd/eval_command.c \
 trainer/cmd/eval_command.h trainer/cmd/cli.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/base/error.h trainer/model/model.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/train/progress.h \
 trainer/train/schedule.h trainer/cmd/common.h trainer/base/clock.h \
 trainer/data/loader.h trainer/base/rng.h trainer/train/auroc.h \
 trainer/cmd/thresholds_file.h trainer/train/eval_thresholds.h \
 trainer/cmd/eval_report.h trainer/train/eval_bootstrap.h \
 trainer/train/eval_calibration.h trainer/model/loss.h \
 trainer/cmd/plot_png.h
trainer/cmd/eval_command.h:
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/train/progress.h:
trainer/train/schedule.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/data/loader.h:
trainer/base/rng.h:
trainer/train/auroc.h:
trainer/cmd/thresholds_file.h:
trainer/train/eval_thresholds.h:
trainer/cmd/eval_report.h:
trainer/train/eval_bootstrap.h:
trainer/train/eval_calibration.h:
trainer/model/loss.h:
trainer/cmd/plot_png.h:
