build-m/obj/trainer/backend/ref/avgpool.o: trainer/backend/ref/avgpool.c \
 trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
