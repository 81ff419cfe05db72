build-m/obj/tests/test_gpu_layers.o: tests/test_gpu_layers.c \
 /usr/local/cuda/include/cuda_runtime_api.h \
 /usr/local/cuda/include/crt/host_defines.h \
 /usr/local/cuda/include/builtin_types.h \
 /usr/local/cuda/include/device_types.h \
 /usr/local/cuda/include/driver_types.h \
 /usr/local/cuda/include/vector_types.h \
 /usr/local/cuda/include/surface_types.h \
 /usr/local/cuda/include/texture_types.h \
 /usr/local/cuda/include/cuda_device_runtime_api.h tests/runner.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/model/input_norm.h tests/layer_cases.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/base/rng.h \
 trainer/backend/gpu/gpu_kernels.h trainer/backend/gpu/gpu_geometry.h
/usr/local/cuda/include/cuda_runtime_api.h:
/usr/local/cuda/include/crt/host_defines.h:
/usr/local/cuda/include/builtin_types.h:
/usr/local/cuda/include/device_types.h:
/usr/local/cuda/include/driver_types.h:
/usr/local/cuda/include/vector_types.h:
/usr/local/cuda/include/surface_types.h:
/usr/local/cuda/include/texture_types.h:
/usr/local/cuda/include/cuda_device_runtime_api.h:
tests/runner.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/model/input_norm.h:
tests/layer_cases.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/backend/gpu/gpu_kernels.h:
trainer/backend/gpu/gpu_geometry.h:
