build-m/obj/trainer/data/image_encode.o: trainer/data/image_encode.c \
 trainer/data/image_encode.h
trainer/data/image_encode.h:
