build-m/obj/trainer/cmd/train.o: trainer/cmd/train.c \
 trainer/train/auroc.h trainer/train/checkpoint.h trainer/base/error.h \
 trainer/model/model.h trainer/train/optim.h trainer/train/hooks.h \
 trainer/base/rng.h trainer/train/schedule.h trainer/train/dist.h \
 trainer/train/grad_sync.h trainer/cmd/run.h trainer/cmd/cli.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/train/progress.h \
 trainer/cmd/common.h trainer/base/clock.h trainer/data/loader.h \
 trainer/cmd/train_gpu.h trainer/train/verdict.h \
 trainer/cmd/train_report.h trainer/train/span.h \
 trainer/train/stop_signal.h trainer/train/checkpoint_replace.h \
 trainer/cmd/eval_command.h trainer/cmd/thresholds_file.h \
 trainer/train/eval_thresholds.h trainer/cmd/train_diverge.h
trainer/train/auroc.h:
trainer/train/checkpoint.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/train/schedule.h:
trainer/train/dist.h:
trainer/train/grad_sync.h:
trainer/cmd/run.h:
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/train/progress.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/data/loader.h:
trainer/cmd/train_gpu.h:
trainer/train/verdict.h:
trainer/cmd/train_report.h:
trainer/train/span.h:
trainer/train/stop_signal.h:
trainer/train/checkpoint_replace.h:
trainer/cmd/eval_command.h:
trainer/cmd/thresholds_file.h:
trainer/train/eval_thresholds.h:
trainer/cmd/train_diverge.h:
