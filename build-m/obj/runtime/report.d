build-m/obj/runtime/report.o: runtime/report.c runtime/runtime.h \
 runtime/bootstrap.h runtime/comm.h runtime/hvd.h runtime/fusion.h \
 runtime/settings.h runtime/timeline.h
runtime/runtime.h:
runtime/bootstrap.h:
runtime/comm.h:
runtime/hvd.h:
runtime/fusion.h:
runtime/settings.h:
runtime/timeline.h:
