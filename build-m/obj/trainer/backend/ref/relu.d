build-m/obj/trainer/backend/ref/relu.o: trainer/backend/ref/relu.c \
 trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
