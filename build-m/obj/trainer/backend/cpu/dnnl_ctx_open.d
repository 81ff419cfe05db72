build-m/obj/trainer/backend/cpu/dnnl_ctx_open.o: \
 trainer/backend/cpu/dnnl_ctx_open.c trainer/backend/cpu/dnnl_ctx.h \
 trainer/backend/cpu/cpu_isa.h trainer/backend/cpu/prim_cache.h
trainer/backend/cpu/dnnl_ctx.h:
trainer/backend/cpu/cpu_isa.h:
trainer/backend/cpu/prim_cache.h:
