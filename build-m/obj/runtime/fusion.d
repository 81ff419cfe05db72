build-m/obj/runtime/fusion.o: runtime/fusion.c runtime/fusion.h \
 runtime/hvd.h runtime/dtype.h
runtime/fusion.h:
runtime/hvd.h:
runtime/dtype.h:
