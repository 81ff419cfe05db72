build-m/obj/trainer/backend/ref/batchnorm.o: \
 trainer/backend/ref/batchnorm.c trainer/backend/ref/layers.h
trainer/backend/ref/layers.h:
