build-m/obj/runtime/dtype.o: runtime/dtype.c runtime/dtype.h \
 runtime/hvd.h
runtime/dtype.h:
runtime/hvd.h:
