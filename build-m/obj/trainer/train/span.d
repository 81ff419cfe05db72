build-m/obj/trainer/train/span.o: trainer/train/span.c \
 trainer/train/dist.h trainer/train/hooks.h trainer/train/span.h
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/train/span.h:
