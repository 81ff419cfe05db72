build-m/obj/trainer/backend/gpu/gpu_pool_plan.o: \
 trainer/backend/gpu/gpu_pool_plan.c trainer/backend/gpu/gpu_pool_plan.h \
 trainer/base/error.h trainer/model/model.h
trainer/backend/gpu/gpu_pool_plan.h:
trainer/base/error.h:
trainer/model/model.h:
