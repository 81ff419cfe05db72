# trainer/backend/gpu/gpu.mk - the "gpu" backend (cuDNN/cuBLAS + small CUDA
# kernels), included by trainer/module.mk. The pure parts (pool plan,
# loss scaler, conv-algorithm cache and its file, input geometry, GPU health and the
# NVML loader) and their unit tests build everywhere; the CUDA parts only
# when HAVE_CUDA, HAVE_CUDNN and HAVE_CUBLAS are all 1. Gives module.mk:
#   GPU_BACKEND_SRCS     C sources for libchexnet.a
#   GPU_BACKEND_CU_OBJS  nvcc-built objects for libchexnet.a
#   GPU_BACKEND_LDLIBS   what linking them needs
# CUDA_ARCHS (top Makefile; default 75 80 86 89 90) picks the SASS built,
# plus PTX of the last one so newer GPUs JIT. CUDA 13 has no sm_70: V100
# sites build with CUDA 12 and CUDA_ARCHS="70 ..." (trainer/backend/gpu/README.md).

GPU_PURE_SRCS := trainer/backend/gpu/gpu_pool_plan.c trainer/backend/gpu/gpu_loss_scale.c \
	trainer/backend/gpu/gpu_algo_cache.c trainer/backend/gpu/gpu_algo_file.c trainer/backend/gpu/gpu_geometry.c trainer/backend/gpu/gpu_health.c \
	trainer/backend/gpu/gpu_nvml.c
GPU_BACKEND_SRCS := $(GPU_PURE_SRCS)
GPU_BACKEND_CU_OBJS :=
GPU_BACKEND_LDLIBS := -ldl
TEST_SRCS += tests/test_gpu_pure.c tests/test_gpu_train_logic.c

$(B)/obj/trainer/backend/gpu/%.o: MODULE_CFLAGS = -Itrainer $(GPU_HOST_CFLAGS)
# backend.o's -DHAVE_GPU_BACKEND follows detection: rebuild it when that changes.
$(B)/obj/trainer/backend/registry.o: $(B)/config.mk

ifeq ($(HAVE_CUDA)$(HAVE_CUDNN)$(HAVE_CUBLAS),111)
GPU_BACKEND_SRCS += trainer/backend/gpu/gpu_check.c trainer/backend/gpu/gpu_backend.c \
	trainer/backend/gpu/gpu_input.c trainer/backend/gpu/gpu_step.c trainer/backend/gpu/gpu_graph.c trainer/backend/gpu/gpu_table.c \
	trainer/backend/gpu/conv.c trainer/backend/gpu/conv_algos.c trainer/backend/gpu/conv_algos_start.c \
	trainer/backend/gpu/linear.c trainer/backend/gpu/batchnorm.c \
	trainer/backend/gpu/pooling.c trainer/backend/gpu/eltwise.c trainer/backend/gpu/gpu_report.c \
	trainer/backend/gpu/gpu_train.c trainer/backend/gpu/gpu_loss.c trainer/backend/gpu/gpu_filters.c \
	trainer/backend/gpu/gpu_staging.c trainer/backend/gpu/gpu_cublas.c trainer/backend/gpu/gpu_launches.c
GPU_CU_SRCS := trainer/backend/gpu/gpu_k_elt.cu trainer/backend/gpu/gpu_k_bn.cu trainer/backend/gpu/gpu_k_pool.cu trainer/backend/gpu/gpu_k_loss.cu
GPU_BACKEND_CU_OBJS := $(patsubst %.cu,$(B)/obj/%.o,$(GPU_CU_SRCS))
GPU_HOST_CFLAGS = $(CUDA_CFLAGS) $(CUDNN_CFLAGS) $(CUBLAS_CFLAGS)
# nvcc's host stubs use the C++ runtime (static-init guards); cuBLAS is
# not linked: gpu_cublas.c opens it on the first call.
GPU_BACKEND_LDLIBS += $(CUDNN_LIBS) $(CUDA_LIBS) -lstdc++

NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_GENCODE := $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	-gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVCC_FLAGS := -std=c++17 -O2 -g -Werror all-warnings \
	-Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-Werror,-fno-exceptions $(GPU_GENCODE)

$(B)/obj/trainer/backend/gpu/%.o: trainer/backend/gpu/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -Itrainer -MMD -MP -MF $(@:.o=.d) -c $< -o $@

# backend.c registers backend_gpu_ops; the tests run the gpu groups.
REGISTRY_DEFS += -DHAVE_GPU_BACKEND
TEST_SRCS += tests/test_gpu_ops.c tests/test_gpu_layers.c tests/test_gpu_graph.c tests/test_gpu_emu.c \
	tests/test_gpu_emulated.c

# The kernels on the CPU (group gpu-emu, tests/gpu_emu): each .cu with its
# launches `K<<<g, b, m, s>>>(` rewritten to the emulator's
# `emu_launch_at(g, b, m, s).run(K, ` and without `extern "C"`, compiled
# as host C++ (nvcc's host compiler) into the test runner only.
GPU_EMU_INCS := $(patsubst trainer/backend/gpu/%.cu,$(B)/obj/tests/gpu_emu/%.emu.inc,$(GPU_CU_SRCS))
$(B)/obj/tests/gpu_emu/%.emu.inc: trainer/backend/gpu/%.cu
	@mkdir -p $(@D)
	perl -pe 's/extern "C" //; s/([A-Za-z_][A-Za-z0-9_]*(?:<T>)?)<<<(.*?)>>>\(/emu_launch_at($$2).run($$1, /g' $< > $@.tmp
	@if grep -q '<<<' $@.tmp; then echo "gpu.mk: $<: a launch the emulator rewrite missed" >&2; exit 1; fi
	mv $@.tmp $@
$(B)/obj/tests/gpu_emu/gpu_emu.o: tests/gpu_emu/gpu_emu.cpp tests/gpu_emu/gpu_emu.h $(GPU_EMU_INCS) \
		trainer/backend/gpu/gpu_k_common.cuh trainer/backend/gpu/gpu_kernels.h trainer/backend/gpu/gpu_geometry.h
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -Wall -Wextra -Wno-unused-parameter -Werror -pthread $(SAN_FLAGS) \
		-I$(@D) -Itests -Itrainer $(CUDA_CFLAGS) -c $< -o $@
TEST_LIBS += $(B)/obj/tests/gpu_emu/gpu_emu.o

# GPU_EMU=1 (in its own B): the emulated GPU. The same backend host code,
# its kernels from the emulator (gpu_emu.cpp with GPU_EMU_DEVICE) and the
# CUDA runtime, cuDNN, cuBLAS and NCCL from tests/gpu_emu (emu.mk, which
# points CUDA_LIBS at them) instead of nvcc and the CUDA libraries, so
# the gpu backend and comm_nccl.c run without a GPU (groups gpu-emulated
# and slurm-gpu-emu; trainer/backend/gpu/README.md).
ifeq ($(GPU_EMU),1)
$(B)/obj/tests/gpu_emu/gpu_emu_device.o: tests/gpu_emu/gpu_emu.cpp tests/gpu_emu/gpu_emu.h \
		tests/gpu_emu/emu_device.h $(GPU_EMU_INCS) trainer/backend/gpu/gpu_k_common.cuh \
		trainer/backend/gpu/gpu_kernels.h
	@mkdir -p $(@D)
	$(CXX) $(EMU_CXXFLAGS) -I$(@D) -DGPU_EMU_DEVICE -c $< -o $@
GPU_BACKEND_CU_OBJS := $(B)/obj/tests/gpu_emu/gpu_emu_device.o
GPU_BACKEND_SRCS := $(filter-out trainer/backend/gpu/gpu_cublas.c,$(GPU_BACKEND_SRCS))
GPU_BACKEND_LDLIBS := -ldl $(CUDA_LIBS)
endif
TEST_CFLAGS += -DHAVE_GPU_BACKEND $(GPU_HOST_CFLAGS)
else
# gpu_train.h's calls without CUDA (never reached: no gpu backend)
GPU_BACKEND_SRCS += trainer/backend/gpu/gpu_train_none.c
endif
