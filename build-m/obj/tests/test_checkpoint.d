build-m/obj/tests/test_checkpoint.o: tests/test_checkpoint.c \
 tests/runner.h trainer/train/checkpoint.h trainer/base/error.h \
 trainer/model/model.h trainer/train/optim.h trainer/train/hooks.h \
 trainer/base/rng.h trainer/train/schedule.h trainer/train/safetensors.h
tests/runner.h:
trainer/train/checkpoint.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/train/schedule.h:
trainer/train/safetensors.h:
