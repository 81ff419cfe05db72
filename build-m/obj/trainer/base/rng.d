build-m/obj/trainer/base/rng.o: trainer/base/rng.c trainer/base/rng.h
trainer/base/rng.h:
