build-m/obj/trainer/train/dist.o: trainer/train/dist.c \
 trainer/train/dist.h trainer/train/hooks.h trainer/train/stop_signal.h \
 runtime/hvd.h
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/train/stop_signal.h:
runtime/hvd.h:
