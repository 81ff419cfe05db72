build-m/obj/trainer/backend/cpu/prim_cache.o: \
 trainer/backend/cpu/prim_cache.c trainer/backend/cpu/prim_cache.h \
 trainer/backend/cpu/dnnl_ctx.h trainer/backend/cpu/cpu_isa.h
trainer/backend/cpu/prim_cache.h:
trainer/backend/cpu/dnnl_ctx.h:
trainer/backend/cpu/cpu_isa.h:
