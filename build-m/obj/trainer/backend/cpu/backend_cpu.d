build-m/obj/trainer/backend/cpu/backend_cpu.o: \
 trainer/backend/cpu/backend_cpu.c trainer/backend/cpu/cpu_internal.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/backend/cpu/dnnl_ctx.h \
 trainer/backend/cpu/cpu_isa.h trainer/backend/cpu/prim_cache.h \
 trainer/model/input_norm.h trainer/backend/cpu/backend_cpu.h \
 trainer/backend/host_loss.h
trainer/backend/cpu/cpu_internal.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/backend/cpu/dnnl_ctx.h:
trainer/backend/cpu/cpu_isa.h:
trainer/backend/cpu/prim_cache.h:
trainer/model/input_norm.h:
trainer/backend/cpu/backend_cpu.h:
trainer/backend/host_loss.h:
