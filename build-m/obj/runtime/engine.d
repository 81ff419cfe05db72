build-m/obj/runtime/engine.o: runtime/engine.c runtime/dtype.h \
 runtime/hvd.h runtime/pipeline.h runtime/runtime.h runtime/bootstrap.h \
 runtime/comm.h runtime/fusion.h runtime/settings.h runtime/timeline.h
runtime/dtype.h:
runtime/hvd.h:
runtime/pipeline.h:
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/fusion.h:
runtime/settings.h:
runtime/timeline.h:
