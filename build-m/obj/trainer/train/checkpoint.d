build-m/obj/trainer/train/checkpoint.o: trainer/train/checkpoint.c \
 trainer/train/checkpoint.h trainer/base/error.h trainer/model/model.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/base/rng.h \
 trainer/train/schedule.h trainer/train/safetensors.h \
 trainer/train/checkpoint_replace.h
trainer/train/checkpoint.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/train/schedule.h:
trainer/train/safetensors.h:
trainer/train/checkpoint_replace.h:
