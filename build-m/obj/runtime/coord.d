build-m/obj/runtime/coord.o: runtime/coord.c runtime/coord.h \
 runtime/fusion.h runtime/hvd.h runtime/plan_cache.h runtime/dtype.h
runtime/coord.h:
runtime/fusion.h:
runtime/hvd.h:
runtime/plan_cache.h:
runtime/dtype.h:
