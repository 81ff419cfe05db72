build-m/obj/trainer/cmd/eval.o: trainer/cmd/eval.c trainer/train/auroc.h \
 trainer/train/checkpoint.h trainer/base/error.h trainer/model/model.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/base/rng.h \
 trainer/train/schedule.h trainer/train/dist.h trainer/model/loss.h \
 trainer/cmd/run.h trainer/cmd/cli.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/train/progress.h trainer/cmd/common.h \
 trainer/base/clock.h trainer/data/loader.h trainer/cmd/eval_command.h \
 trainer/cmd/thresholds_file.h trainer/train/eval_thresholds.h \
 trainer/train/stop_signal.h
trainer/train/auroc.h:
trainer/train/checkpoint.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/train/schedule.h:
trainer/train/dist.h:
trainer/model/loss.h:
trainer/cmd/run.h:
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/train/progress.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/data/loader.h:
trainer/cmd/eval_command.h:
trainer/cmd/thresholds_file.h:
trainer/train/eval_thresholds.h:
trainer/train/stop_signal.h:
