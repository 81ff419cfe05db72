build-m/obj/trainer/base/error.o: trainer/base/error.c \
 trainer/base/error.h
trainer/base/error.h:
