build-m/obj/trainer/train/stop_signal.o: trainer/train/stop_signal.c \
 trainer/train/stop_signal.h
trainer/train/stop_signal.h:
