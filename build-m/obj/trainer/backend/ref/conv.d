build-m/obj/trainer/backend/ref/conv.o: trainer/backend/ref/conv.c \
 trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
