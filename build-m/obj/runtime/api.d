build-m/obj/runtime/api.o: runtime/api.c runtime/dtype.h runtime/hvd.h \
 runtime/runtime.h runtime/bootstrap.h runtime/comm.h runtime/fusion.h \
 runtime/settings.h runtime/timeline.h
runtime/dtype.h:
runtime/hvd.h:
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/fusion.h:
runtime/settings.h:
runtime/timeline.h:
