build-m/obj/trainer/backend/cpu/batchnorm.o: \
 trainer/backend/cpu/batchnorm.c trainer/backend/cpu/cpu_internal.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/backend/cpu/dnnl_ctx.h \
 trainer/backend/cpu/cpu_isa.h trainer/backend/cpu/prim_cache.h
trainer/backend/cpu/cpu_internal.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/backend/cpu/dnnl_ctx.h:
trainer/backend/cpu/cpu_isa.h:
trainer/backend/cpu/prim_cache.h:
