build-m/obj/trainer/data/image_decode.o: trainer/data/image_decode.c \
 trainer/data/image_decode.h trainer/data/image_resize.h
trainer/data/image_decode.h:
trainer/data/image_resize.h:
