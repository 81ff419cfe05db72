build-m/obj/tests/test_malformed.o: tests/test_malformed.c tests/runner.h \
 trainer/train/checkpoint.h trainer/base/error.h trainer/model/model.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/base/rng.h \
 trainer/train/schedule.h trainer/data/set.h trainer/data/list.h \
 trainer/train/safetensors.h
tests/runner.h:
trainer/train/checkpoint.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/train/schedule.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/train/safetensors.h:
