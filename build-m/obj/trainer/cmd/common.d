build-m/obj/trainer/cmd/common.o: trainer/cmd/common.c \
 trainer/train/dist.h trainer/train/hooks.h \
 trainer/backend/gpu/gpu_train.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/base/error.h trainer/model/model.h \
 trainer/model/loss.h trainer/cmd/common.h trainer/base/clock.h \
 trainer/cmd/cli.h trainer/train/optim.h trainer/train/progress.h \
 trainer/train/schedule.h trainer/data/loader.h trainer/base/rng.h \
 trainer/train/auroc.h trainer/train/span.h trainer/train/stop_signal.h
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/backend/gpu/gpu_train.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/model/loss.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/cmd/cli.h:
trainer/train/optim.h:
trainer/train/progress.h:
trainer/train/schedule.h:
trainer/data/loader.h:
trainer/base/rng.h:
trainer/train/auroc.h:
trainer/train/span.h:
trainer/train/stop_signal.h:
