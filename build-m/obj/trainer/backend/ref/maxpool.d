build-m/obj/trainer/backend/ref/maxpool.o: trainer/backend/ref/maxpool.c \
 trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
