build-m/obj/trainer/train/safetensors.o: trainer/train/safetensors.c \
 trainer/train/safetensors.h trainer/base/error.h \
 trainer/base/text_control.h
trainer/train/safetensors.h:
trainer/base/error.h:
trainer/base/text_control.h:
