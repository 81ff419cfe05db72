build-m/obj/tests/test_train_dist.o: tests/test_train_dist.c \
 trainer/train/dist.h trainer/train/hooks.h trainer/train/grad_sync.h \
 trainer/model/model.h trainer/base/error.h tests/runner.h \
 trainer/train/safetensors.h trainer/train/stop_signal.h
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/train/grad_sync.h:
trainer/model/model.h:
trainer/base/error.h:
tests/runner.h:
trainer/train/safetensors.h:
trainer/train/stop_signal.h:
