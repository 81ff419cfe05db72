build-m/obj/trainer/base/text_control.o: trainer/base/text_control.c \
 trainer/base/text_control.h
trainer/base/text_control.h:
