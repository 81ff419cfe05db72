build-m/obj/trainer/cmd/train_gpu.o: trainer/cmd/train_gpu.c \
 trainer/train/dist.h trainer/train/hooks.h \
 trainer/backend/gpu/gpu_train.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/base/error.h trainer/model/model.h \
 trainer/cmd/train_gpu.h trainer/train/grad_sync.h trainer/train/optim.h \
 trainer/cmd/common.h trainer/base/clock.h trainer/cmd/cli.h \
 trainer/train/progress.h trainer/train/schedule.h trainer/data/loader.h \
 trainer/base/rng.h trainer/train/auroc.h trainer/train/verdict.h \
 trainer/cmd/train_health.h trainer/backend/gpu/gpu_health.h
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/backend/gpu/gpu_train.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/cmd/train_gpu.h:
trainer/train/grad_sync.h:
trainer/train/optim.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/cmd/cli.h:
trainer/train/progress.h:
trainer/train/schedule.h:
trainer/data/loader.h:
trainer/base/rng.h:
trainer/train/auroc.h:
trainer/train/verdict.h:
trainer/cmd/train_health.h:
trainer/backend/gpu/gpu_health.h:
