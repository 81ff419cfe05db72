build-m/obj/trainer/train/progress.o: trainer/train/progress.c \
 trainer/train/progress.h
trainer/train/progress.h:
