build-m/obj/tests/test_gpu_emu.o: tests/test_gpu_emu.c \
 tests/gpu_emu/gpu_emu.h trainer/backend/gpu/gpu_kernels.h \
 /usr/local/cuda/include/cuda_runtime_api.h \
 /usr/local/cuda/include/crt/host_defines.h \
 /usr/local/cuda/include/builtin_types.h \
 /usr/local/cuda/include/device_types.h \
 /usr/local/cuda/include/driver_types.h \
 /usr/local/cuda/include/vector_types.h \
 /usr/local/cuda/include/surface_types.h \
 /usr/local/cuda/include/texture_types.h \
 /usr/local/cuda/include/cuda_device_runtime_api.h \
 trainer/backend/gpu/gpu_geometry.h trainer/base/error.h \
 trainer/model/input_norm.h trainer/base/batch.h trainer/model/loss.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/backend/ref/layers.h \
 trainer/base/rng.h tests/runner.h
tests/gpu_emu/gpu_emu.h:
trainer/backend/gpu/gpu_kernels.h:
/usr/local/cuda/include/cuda_runtime_api.h:
/usr/local/cuda/include/crt/host_defines.h:
/usr/local/cuda/include/builtin_types.h:
/usr/local/cuda/include/device_types.h:
/usr/local/cuda/include/driver_types.h:
/usr/local/cuda/include/vector_types.h:
/usr/local/cuda/include/surface_types.h:
/usr/local/cuda/include/texture_types.h:
/usr/local/cuda/include/cuda_device_runtime_api.h:
trainer/backend/gpu/gpu_geometry.h:
trainer/base/error.h:
trainer/model/input_norm.h:
trainer/base/batch.h:
trainer/model/loss.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/backend/ref/layers.h:
trainer/base/rng.h:
tests/runner.h:
