build-m/obj/runtime/api.o: runtime/api.c runtime/control_env.h \
 runtime/auth.h runtime/sha256.h runtime/runtime.h runtime/bootstrap.h \
 runtime/comm.h runtime/hvd.h runtime/fusion.h runtime/settings.h \
 runtime/timeline.h runtime/dtype.h
runtime/control_env.h:
runtime/auth.h:
runtime/sha256.h:
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/hvd.h:
runtime/fusion.h:
runtime/settings.h:
runtime/timeline.h:
runtime/dtype.h:
