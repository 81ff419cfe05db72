build-m/obj/runtime/wire.o: runtime/wire.c runtime/wire.h \
 runtime/fusion.h runtime/hvd.h
runtime/wire.h:
runtime/fusion.h:
runtime/hvd.h:
