build-m/obj/trainer/base/clock.o: trainer/base/clock.c \
 trainer/base/clock.h
trainer/base/clock.h:
