build-m/obj/runtime/tests/hvd_rt_test.o: runtime/tests/hvd_rt_test.c \
 runtime/tests/../dtype.h runtime/tests/../hvd.h \
 runtime/tests/../runtime.h runtime/tests/../bootstrap.h \
 runtime/tests/../comm.h runtime/tests/../fusion.h \
 runtime/tests/../settings.h runtime/tests/../timeline.h runtime/hvd.h
runtime/tests/../dtype.h:
runtime/tests/../hvd.h:
runtime/tests/../runtime.h:
runtime/tests/../bootstrap.h:
runtime/tests/../comm.h:
runtime/tests/../fusion.h:
runtime/tests/../settings.h:
runtime/tests/../timeline.h:
runtime/hvd.h:
