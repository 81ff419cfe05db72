build-m/obj/trainer/backend/cpu/dnnl_ctx.o: \
 trainer/backend/cpu/dnnl_ctx.c trainer/backend/cpu/dnnl_ctx.h \
 trainer/backend/cpu/cpu_isa.h
trainer/backend/cpu/dnnl_ctx.h:
trainer/backend/cpu/cpu_isa.h:
