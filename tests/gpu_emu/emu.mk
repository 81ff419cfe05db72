# tests/gpu_emu/emu.mk - the emulated device's libraries (make GPU_EMU=1),
# included by the top Makefile right after detection, before any module
# reads CUDA_LIBS: the CUDA runtime (emu_runtime.cpp), cuDNN and cuBLAS
# (fake_cuda.cpp, its algorithms fake_algos.cpp) and NCCL (fake_nccl.cpp) in one archive that takes the
# place of libcudart, libcudnn, libcublas and libnccl on every link line.
# The headers stay the toolkit's: the emulator implements their API.
# Needs HAVE_CUDA (the headers); NCCL's header makes comm_nccl.c build.
EMU_CXXFLAGS = -std=c++17 -O3 -g -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
	$(SAN_FLAGS) -Itests -Itrainer $(CUDA_CFLAGS)
EMU_LIB := $(B)/obj/tests/gpu_emu/libemu-device.a
EMU_OBJS := $(patsubst %,$(B)/obj/tests/gpu_emu/%.o,emu_runtime fake_cuda fake_algos fake_nccl)

$(EMU_OBJS): $(B)/obj/tests/gpu_emu/%.o: tests/gpu_emu/%.cpp tests/gpu_emu/emu_device.h tests/gpu_emu/emu_algos.h
	@mkdir -p $(@D)
	$(CXX) $(EMU_CXXFLAGS) -c $< -o $@
$(EMU_LIB): $(EMU_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

CUDA_LIBS := $(EMU_LIB) -lstdc++ -lm
CUDNN_LIBS := $(CUDA_LIBS)
CUBLAS_LIBS := $(CUDA_LIBS)
NCCL_LIBS :=
# Every program that links them (the archive twice on a line is harmless).
$(addprefix $(B)/,chexnet hvdtest hvd-rt-test bench-allreduce hvd-own-symbols hvd-attack hvd-check hvd-nccl-calls): $(EMU_LIB)
# The test files that ask whether they run on the emulated device
# (slurm-e2e-gpu) are told so; every other object is the plain build's
# compile, which make check's ccache then has.
EMU_TEST_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(shell grep -l HVD_GPU_EMU tests/*.c))
$(EMU_TEST_OBJS): TEST_CFLAGS += -DHVD_GPU_EMU
