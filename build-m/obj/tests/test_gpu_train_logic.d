build-m/obj/tests/test_gpu_train_logic.o: tests/test_gpu_train_logic.c \
 trainer/backend/gpu/gpu_loss_scale.h trainer/base/error.h \
 trainer/train/grad_sync.h trainer/train/dist.h trainer/train/hooks.h \
 trainer/model/model.h trainer/cmd/train_health.h \
 trainer/backend/gpu/gpu_health.h trainer/train/verdict.h tests/runner.h
trainer/backend/gpu/gpu_loss_scale.h:
trainer/base/error.h:
trainer/train/grad_sync.h:
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/model/model.h:
trainer/cmd/train_health.h:
trainer/backend/gpu/gpu_health.h:
trainer/train/verdict.h:
tests/runner.h:
