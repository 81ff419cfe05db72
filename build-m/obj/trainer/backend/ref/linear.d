build-m/obj/trainer/backend/ref/linear.o: trainer/backend/ref/linear.c \
 trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
