build-m/obj/runtime/plan_cache.o: runtime/plan_cache.c \
 runtime/plan_cache.h runtime/fusion.h runtime/hvd.h runtime/wire.h
runtime/plan_cache.h:
runtime/fusion.h:
runtime/hvd.h:
runtime/wire.h:
