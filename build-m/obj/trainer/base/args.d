build-m/obj/trainer/base/args.o: trainer/base/args.c trainer/base/args.h
trainer/base/args.h:
