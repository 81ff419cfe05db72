build-m/obj/trainer/cmd/train_report.o: trainer/cmd/train_report.c \
 trainer/train/auroc.h trainer/train/dist.h trainer/train/hooks.h \
 trainer/train/progress.h trainer/cmd/train_report.h trainer/cmd/cli.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/train/optim.h trainer/train/schedule.h \
 trainer/cmd/common.h trainer/base/clock.h trainer/data/loader.h \
 trainer/base/rng.h trainer/train/stop_signal.h
trainer/train/auroc.h:
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/train/progress.h:
trainer/cmd/train_report.h:
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/schedule.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/data/loader.h:
trainer/base/rng.h:
trainer/train/stop_signal.h:
