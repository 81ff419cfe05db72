build-m/obj/tests/test_runtime_control.o: tests/test_runtime_control.c \
 runtime/auth.h runtime/sha256.h runtime/control.h runtime/auth.h \
 runtime/coord.h runtime/fusion.h runtime/hvd.h runtime/plan_cache.h \
 runtime/runtime.h runtime/bootstrap.h runtime/comm.h runtime/settings.h \
 runtime/timeline.h runtime/wire.h tests/runner.h runtime/sha256.h \
 runtime/wire.h
runtime/auth.h:
runtime/sha256.h:
runtime/control.h:
runtime/auth.h:
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
tests/runner.h:
runtime/sha256.h:
runtime/wire.h:
