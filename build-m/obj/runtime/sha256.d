build-m/obj/runtime/sha256.o: runtime/sha256.c runtime/sha256.h
runtime/sha256.h:
