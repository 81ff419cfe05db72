build-m/obj/runtime/submit.o: runtime/submit.c runtime/dtype.h \
 runtime/hvd.h runtime/wire.h runtime/fusion.h runtime/runtime.h \
 runtime/bootstrap.h runtime/comm.h runtime/settings.h runtime/timeline.h
runtime/dtype.h:
runtime/hvd.h:
runtime/wire.h:
runtime/fusion.h:
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/settings.h:
runtime/timeline.h:
