build-m/obj/trainer/data/image_resize.o: trainer/data/image_resize.c \
 trainer/data/image_resize.h
trainer/data/image_resize.h:
