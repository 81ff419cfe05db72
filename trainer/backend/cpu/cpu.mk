# trainer/backend/cpu/cpu.mk - the oneDNN "cpu" backend (included by
# trainer/module.mk when HAVE_DNNL). Its sources go into libchexnet.a; its
# tests into the runner.
CPU_BACKEND_SRCS := trainer/backend/cpu/dnnl_md.c trainer/backend/cpu/dnnl_op.c trainer/backend/cpu/cpu_isa.c trainer/backend/cpu/dnnl_ctx.c trainer/backend/cpu/dnnl_ctx_open.c trainer/backend/cpu/prim_cache.c \
	trainer/backend/cpu/cpu_plan.c trainer/backend/cpu/layout.c trainer/backend/cpu/cpu_move.c \
	trainer/backend/cpu/conv.c trainer/backend/cpu/batchnorm.c trainer/backend/cpu/eltwise.c \
	trainer/backend/cpu/pooling.c trainer/backend/cpu/linear.c trainer/backend/cpu/backend_cpu.c
# The backend's module flags (trainer/module.mk applies them).
CPU_BACKEND_CFLAGS = $(DNNL_CFLAGS) -fopenmp
# omp_set_num_threads (threads = allowed CPUs): libdnnl's own OpenMP runtime
CPU_BACKEND_LDLIBS = -lgomp
DNNL_LIBS += $(CPU_BACKEND_LDLIBS)

REGISTRY_DEFS += -DHAVE_CPU_BACKEND

CPU_TEST_SRCS := tests/test_cpu_layers.c tests/test_cpu_models.c tests/test_cpu_torchvision.c \
	tests/test_cpu_isa.c tests/cpu_isa_caps.c tests/test_cpu_onednn3.c
TEST_SRCS += $(CPU_TEST_SRCS)
TEST_CFLAGS += -DHAVE_CPU_BACKEND $(DNNL_CFLAGS)
