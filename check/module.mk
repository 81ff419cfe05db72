# check/module.mk - hvd-check, the acceptance check for admins (check/main.c):
# links libhvd.a (only runtime/hvd.h) and hwloc; CUDA in GPU builds, for the
# NCCL backend's device buffers. Needs libhvd (HAVE_HVD) and hwloc.
ifeq ($(HAVE_HVD)$(HAVE_HWLOC),11)

CHECK_SRCS := check/main.c check/record.c check/facts.c check/locality.c check/collective.c \
	check/buffer.c check/table.c check/gl_listener.c check/xmlfile.c
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

# install-hvd-check: the program and hvd-check(8).
INSTALL_RULES += install-hvd-check
install-hvd-check_FILES := bindir:hvd-check mandir:man8/hvd-check.8
.PHONY: install-hvd-check
ifeq ($(HAVE_HVD)$(HAVE_HWLOC),11)
install-hvd-check: $(B)/hvd-check
	$(INSTALL) -d '$(DESTDIR)$(bindir)' '$(DESTDIR)$(mandir)/man8'
	$(INSTALL) -m 0755 $(B)/hvd-check '$(DESTDIR)$(bindir)/hvd-check'
	$(call install_man,man/hvd-check.8,$(mandir)/man8/hvd-check.8)
else
INSTALL_MISSING += install-hvd-check
install-hvd-check:
	@echo "hvd: install: 'hvd-check': needs$(if $(filter 1,$(HAVE_HVD)),, PMIx and nettle (libpmix-dev, nettle-dev))$(if $(filter 1,$(HAVE_HWLOC)),, hwloc (libhwloc-dev or HWLOC_HOME)): not found" >&2; exit 1
endif
