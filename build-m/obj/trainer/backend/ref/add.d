build-m/obj/trainer/backend/ref/add.o: trainer/backend/ref/add.c \
 trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
