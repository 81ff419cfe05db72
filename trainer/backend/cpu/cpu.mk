# trainer/cpu/cpu.mk - the oneDNN "cpu" backend (included by
# trainer/module.mk when HAVE_DNNL). Its sources go into libchexnet.a; its
# tests into the runner.
CPU_BACKEND_SRCS := trainer/cpu/cpu_isa.c trainer/cpu/dnnl_ctx.c trainer/cpu/prim_cache.c \
	trainer/cpu/cpu_arena.c trainer/cpu/cpu_plan.c trainer/cpu/cpu_move.c \
	trainer/cpu/conv.c trainer/cpu/bnorm.c trainer/cpu/eltwise.c \
	trainer/cpu/pool.c trainer/cpu/linear.c trainer/cpu/backend_cpu.c
CPU_BACKEND_CFLAGS = $(DNNL_CFLAGS) -fopenmp
# omp_set_num_threads (threads = allowed CPUs): libdnnl's own OpenMP runtime
CPU_BACKEND_LDLIBS = -lgomp
DNNL_LIBS += $(CPU_BACKEND_LDLIBS)

$(B)/obj/trainer/cpu/%.o: CFLAGS += $(CPU_BACKEND_CFLAGS)

CPU_TEST_SRCS := tests/test_cpu_layers.c tests/test_cpu_models.c tests/test_cpu_arena.c \
	tests/test_cpu_isa.c tests/cpu_isa_caps.c
TEST_SRCS += $(CPU_TEST_SRCS)
TEST_CFLAGS += -DHAVE_CPU_BACKEND
