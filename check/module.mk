# check/module.mk - hvd-check, the acceptance check for admins (check/main.c):
# links libhvd.a (only runtime/hvd.h) and hwloc; CUDA in GPU builds, for the
# NCCL backend's device buffers. Needs PMIx (libhvd) and hwloc.
ifeq ($(HAVE_PMIX)$(HAVE_HWLOC),11)

CHECK_SRCS := check/main.c check/record.c check/facts.c check/locality.c check/collective.c \
	check/buffer.c check/table.c
CHECK_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(CHECK_SRCS))
CHECK_DEFS := $(if $(filter 11,$(HAVE_CUDA)$(HAVE_NCCL)),-DHAVE_CUDA)
$(B)/obj/check/%.o: MODULE_CFLAGS = -Icheck -Iruntime $(HWLOC_CFLAGS) $(CHECK_DEFS) \
	$(if $(CHECK_DEFS),$(CUDA_CFLAGS))

$(B)/hvd-check: $(CHECK_OBJS) $(B)/libhvd.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(RUNTIME_LDLIBS) $(HWLOC_LIBS) -lm

PROGRAMS += $(B)/hvd-check
TEST_SRCS += tests/test_check_env.c tests/test_check_slurm.c
TEST_CFLAGS += -DHVD_HAVE_CHECK
endif
