build-m/obj/tests/test_gpu_pure.o: tests/test_gpu_pure.c tests/runner.h \
 trainer/model/model.h trainer/base/error.h \
 trainer/backend/gpu/gpu_algo_cache.h trainer/backend/gpu/gpu_geometry.h \
 trainer/backend/gpu/gpu_health.h trainer/backend/gpu/gpu_loss_scale.h \
 trainer/backend/gpu/gpu_pool_plan.h
tests/runner.h:
trainer/model/model.h:
trainer/base/error.h:
trainer/backend/gpu/gpu_algo_cache.h:
trainer/backend/gpu/gpu_geometry.h:
trainer/backend/gpu/gpu_health.h:
trainer/backend/gpu/gpu_loss_scale.h:
trainer/backend/gpu/gpu_pool_plan.h:
