build-m/obj/trainer/train/schedule.o: trainer/train/schedule.c \
 trainer/train/schedule.h trainer/base/error.h
trainer/train/schedule.h:
trainer/base/error.h:
