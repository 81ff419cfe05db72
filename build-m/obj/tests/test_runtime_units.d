build-m/obj/tests/test_runtime_units.o: tests/test_runtime_units.c \
 runtime/bootstrap.h runtime/coord.h runtime/fusion.h runtime/hvd.h \
 runtime/plan_cache.h runtime/dtype.h runtime/fusion.h \
 runtime/plan_cache.h tests/runner.h runtime/runtime.h \
 runtime/bootstrap.h runtime/comm.h runtime/settings.h runtime/timeline.h \
 runtime/settings.h runtime/timeline.h
runtime/bootstrap.h:
runtime/coord.h:
runtime/fusion.h:
runtime/hvd.h:
runtime/plan_cache.h:
runtime/dtype.h:
runtime/fusion.h:
runtime/plan_cache.h:
tests/runner.h:
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/settings.h:
runtime/timeline.h:
runtime/settings.h:
runtime/timeline.h:
