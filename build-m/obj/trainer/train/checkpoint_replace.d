build-m/obj/trainer/train/checkpoint_replace.o: \
 trainer/train/checkpoint_replace.c trainer/train/checkpoint_replace.h \
 trainer/base/error.h trainer/train/safetensors.h
trainer/train/checkpoint_replace.h:
trainer/base/error.h:
trainer/train/safetensors.h:
