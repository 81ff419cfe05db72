build-m/obj/trainer/backend/gpu/pooling.o: trainer/backend/gpu/pooling.c \
 trainer/backend/gpu/gpu_check.h /usr/local/cuda/include/cublas_v2.h \
 /usr/local/cuda/include/cublas_api.h \
 /usr/local/cuda/include/driver_types.h \
 /usr/local/cuda/include/crt/host_defines.h \
 /usr/local/cuda/include/vector_types.h \
 /usr/local/cuda/include/cuComplex.h /usr/local/cuda/include/cuda_fp16.h \
 /usr/local/cuda/include/vector_functions.h \
 /usr/local/cuda/include/cuda_runtime_api.h \
 /usr/local/cuda/include/builtin_types.h \
 /usr/local/cuda/include/device_types.h \
 /usr/local/cuda/include/surface_types.h \
 /usr/local/cuda/include/texture_types.h \
 /usr/local/cuda/include/cuda_device_runtime_api.h \
 /usr/local/cuda/include/vector_functions.hpp \
 /usr/local/cuda/include/nv/target \
 /usr/local/cuda/include/nv/detail/__target_macros \
 /usr/local/cuda/include/nv/detail/__preprocessor \
 /usr/local/cuda/include/cuda_fp16.hpp \
 /usr/local/cuda/include/cuda_bf16.h /usr/local/cuda/include/cuda_fp16.h \
 /usr/local/cuda/include/cuda_bf16.hpp \
 /usr/local/cuda/include/library_types.h \
 /usr/local/cuda/include/cuda_runtime_api.h \
 /usr/local/cuda/include/cudnn.h /usr/local/cuda/include/cudnn_version.h \
 /usr/local/cuda/include/cudnn_graph.h \
 /usr/local/cuda/include/cudnn_ops.h /usr/local/cuda/include/cudnn_adv.h \
 /usr/local/cuda/include/cudnn_cnn.h trainer/base/error.h \
 trainer/backend/gpu/gpu_internal.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/model/model.h \
 trainer/backend/gpu/gpu_algo_cache.h trainer/backend/gpu/gpu_health.h \
 trainer/backend/gpu/gpu_kernels.h trainer/backend/gpu/gpu_geometry.h \
 trainer/backend/gpu/gpu_loss_scale.h trainer/backend/gpu/gpu_pool_plan.h
trainer/backend/gpu/gpu_check.h:
/usr/local/cuda/include/cublas_v2.h:
/usr/local/cuda/include/cublas_api.h:
/usr/local/cuda/include/driver_types.h:
/usr/local/cuda/include/crt/host_defines.h:
/usr/local/cuda/include/vector_types.h:
/usr/local/cuda/include/cuComplex.h:
/usr/local/cuda/include/cuda_fp16.h:
/usr/local/cuda/include/vector_functions.h:
/usr/local/cuda/include/cuda_runtime_api.h:
/usr/local/cuda/include/builtin_types.h:
/usr/local/cuda/include/device_types.h:
/usr/local/cuda/include/surface_types.h:
/usr/local/cuda/include/texture_types.h:
/usr/local/cuda/include/cuda_device_runtime_api.h:
/usr/local/cuda/include/vector_functions.hpp:
/usr/local/cuda/include/nv/target:
/usr/local/cuda/include/nv/detail/__target_macros:
/usr/local/cuda/include/nv/detail/__preprocessor:
/usr/local/cuda/include/cuda_fp16.hpp:
/usr/local/cuda/include/cuda_bf16.h:
/usr/local/cuda/include/cuda_fp16.h:
/usr/local/cuda/include/cuda_bf16.hpp:
/usr/local/cuda/include/library_types.h:
/usr/local/cuda/include/cuda_runtime_api.h:
/usr/local/cuda/include/cudnn.h:
/usr/local/cuda/include/cudnn_version.h:
/usr/local/cuda/include/cudnn_graph.h:
/usr/local/cuda/include/cudnn_ops.h:
/usr/local/cuda/include/cudnn_adv.h:
/usr/local/cuda/include/cudnn_cnn.h:
trainer/base/error.h:
trainer/backend/gpu/gpu_internal.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/model/model.h:
trainer/backend/gpu/gpu_algo_cache.h:
trainer/backend/gpu/gpu_health.h:
trainer/backend/gpu/gpu_kernels.h:
trainer/backend/gpu/gpu_geometry.h:
trainer/backend/gpu/gpu_loss_scale.h:
trainer/backend/gpu/gpu_pool_plan.h:
