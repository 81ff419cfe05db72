build-m/obj/runtime/control_env.o: runtime/control_env.c \
 runtime/bootstrap_env.h runtime/control.h runtime/auth.h \
 runtime/sha256.h runtime/coord.h runtime/fusion.h runtime/hvd.h \
 runtime/plan_cache.h runtime/runtime.h runtime/bootstrap.h \
 runtime/comm.h runtime/settings.h runtime/timeline.h runtime/wire.h \
 runtime/control_env.h
runtime/bootstrap_env.h:
runtime/control.h:
runtime/auth.h:
runtime/sha256.h:
runtime/coord.h:
runtime/fusion.h:
runtime/hvd.h:
runtime/plan_cache.h:
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/settings.h:
runtime/timeline.h:
runtime/wire.h:
runtime/control_env.h:
