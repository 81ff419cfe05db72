build-m/obj/runtime/auth.o: runtime/auth.c runtime/auth.h \
 runtime/sha256.h
runtime/auth.h:
runtime/sha256.h:
