# runtime/module.mk - libhvd (runtime/*/*.c, in layers: HACKING.md; libhvd.a, libhvd.so.0,
# install-libhvd) and the programs that exercise it
# under srun: $(B)/hvd-rt-test (tests) and $(B)/bench-allreduce (bench/).
# Needs PMIx and nettle (SHA-256, HMAC: HAVE_HVD); MPI gives the host backend; CUDA+NCCL add comm_nccl.c
# (compiled and linked with -Werror, never run on a machine without GPUs).
HAVE_HVD := $(if $(filter 11,$(HAVE_PMIX)$(HAVE_NETTLE)),1,0)
ifeq ($(HAVE_HVD),1)

RUNTIME_SRCS := runtime/core/clock.c runtime/core/dtype.c runtime/core/fail.c runtime/core/settings.c \
	runtime/core/fdio.c runtime/core/auth.c runtime/core/csv_list.c \
	runtime/bootstrap/bootstrap.c runtime/bootstrap/bootstrap_env.c \
	runtime/observe/timeline.c runtime/observe/report.c \
	runtime/plan/fusion.c runtime/plan/wire.c runtime/plan/plan_cache.c runtime/plan/coord.c \
	runtime/transport/comm_self.c runtime/transport/comm_tcp.c runtime/transport/comm_tcp_link.c \
	runtime/transport/iface_shared.c runtime/vote/vote.c runtime/vote/vote_shm.c runtime/vote/vote_ring.c \
	runtime/engine/state.c runtime/engine/mailbox.c runtime/engine/agree.c runtime/engine/engine.c runtime/engine/pipeline.c \
	runtime/control/control.c runtime/control/control_join.c runtime/control/control_msg.c \
	runtime/control/control_loop.c runtime/control/control_nego.c runtime/control/control_env.c \
	runtime/api/api.c runtime/api/submit.c runtime/api/error.c
RUNTIME_DEFS :=
RUNTIME_CFLAGS_DEPS := $(PMIX_CFLAGS) $(NETTLE_CFLAGS)
RUNTIME_LDLIBS := $(PMIX_LIBS) $(NETTLE_LIBS)
ifeq ($(HAVE_MPI),1)
RUNTIME_SRCS += runtime/transport/comm_mpi.c runtime/vote/vote_mpi.c
RUNTIME_DEFS += -DHAVE_MPI
RUNTIME_CFLAGS_DEPS += $(MPI_CFLAGS)
RUNTIME_LDLIBS += $(MPI_LIBS)
endif
ifeq ($(HAVE_CUDA)$(HAVE_NCCL),11)
RUNTIME_SRCS += runtime/transport/comm_nccl.c
RUNTIME_DEFS += -DHAVE_CUDA -DHAVE_NCCL
RUNTIME_CFLAGS_DEPS += $(CUDA_CFLAGS) $(NCCL_CFLAGS)
RUNTIME_LDLIBS += $(NCCL_LIBS) $(CUDA_LIBS)
endif
RUNTIME_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(RUNTIME_SRCS))

$(B)/obj/runtime/%.o: MODULE_CFLAGS = -Iruntime $(RUNTIME_CFLAGS_DEPS) $(RUNTIME_DEFS)
$(B)/obj/bench/%.o: MODULE_CFLAGS = -Iruntime $(MPI_CFLAGS) $(RUNTIME_DEFS)

# libhvd.a, what a program links, exports only the API (hvd.h): it holds
# one relocatable object (ld -r of every runtime object) in which every
# global symbol but hvd_* is made local (objcopy --keep-global-symbol), so
# the runtime's internal names (timeline_open, engine_start, ...) can
# neither collide with nor be reached by a program's own. The unit tests
# reach the internals through libhvd-internal.a (the plain objects).
OBJCOPY ?= objcopy
$(B)/obj/runtime/api/error.o: VERSION
$(B)/obj/runtime/libhvd.o: $(RUNTIME_OBJS)
	$(LD) -r -o $@.all $^
	$(OBJCOPY) --wildcard --keep-global-symbol='hvd_*' $@.all $@
	@rm -f $@.all
$(B)/libhvd.a: $(B)/obj/runtime/libhvd.o
	@rm -f $@
	$(AR) rcs $@ $^
HVD_INTERNAL_LIB := $(B)/obj/runtime/libhvd-internal.a
$(HVD_INTERNAL_LIB): $(RUNTIME_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

LIBS_STATIC += $(B)/libhvd.a

# libhvd.so.0: the same sources again as -fPIC objects (obj/pic/), linked
# with a version script (mk/libhvd.map) that exports hvd_* only. Archives
# among the libraries (GPU_EMU=1's emulated device) are not position-
# independent: they stay out, the program that uses the emulator links them.
RUNTIME_PIC_OBJS := $(patsubst %.c,$(B)/obj/pic/%.o,$(RUNTIME_SRCS))
$(B)/obj/pic/runtime/%.o: runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -fPIC -Iruntime $(RUNTIME_CFLAGS_DEPS) $(RUNTIME_DEFS) -MMD -MP -c $< -o $@
$(B)/obj/pic/runtime/api/error.o: VERSION
$(B)/libhvd.so.0: $(RUNTIME_PIC_OBJS) mk/libhvd.map
	$(CC) $(LDFLAGS_ALL) -shared -Wl,-soname,libhvd.so.0 -Wl,--version-script=mk/libhvd.map \
		-Wl,-z,relro -Wl,-z,now -o $@ $(RUNTIME_PIC_OBJS) $(filter-out %.a,$(RUNTIME_LDLIBS)) -lm
LIBS_STATIC += $(B)/libhvd.so.0

# a test program: it also checks the dtype conversions (internals)
$(B)/hvd-rt-test: $(B)/obj/runtime/tests/hvd_rt_test.o $(HVD_INTERNAL_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(RUNTIME_LDLIBS) -lm
TEST_PROGRAMS += $(B)/hvd-rt-test

# The NCCL calls comm_nccl.c makes, one line each (a GPU node against the
# emulated NCCL: tests/gpu/run.sh).
ifeq ($(HAVE_CUDA)$(HAVE_NCCL),11)
$(B)/hvd-nccl-calls: $(B)/obj/runtime/tests/nccl_calls.o
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(NCCL_LIBS) $(CUDA_LIBS)
TEST_PROGRAMS += $(B)/hvd-nccl-calls
endif

# The control-plane attack tests (tests/slurm/attack.sh): the attacker, and
# the recording shim preloaded into a real rank (plain flags: it is loaded
# into processes that are not built with the sanitizers).
$(B)/hvd-attack: $(B)/obj/runtime/tests/hvd_attack.o $(HVD_INTERNAL_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(NETTLE_LIBS)
$(B)/hvd-record.so: runtime/tests/hvd_record.c
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl
TEST_PROGRAMS += $(B)/hvd-attack $(B)/hvd-record.so

ifeq ($(HAVE_MPI),1)
$(B)/bench-allreduce: $(B)/obj/bench/allreduce.o $(B)/libhvd.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(RUNTIME_LDLIBS) -lm
TEST_PROGRAMS += $(B)/bench-allreduce
endif

# Unit tests reach the pure parts (settings, fusion, coord, timeline,
# report, dtype, bootstrap_decide) through the archive.
TEST_SRCS += tests/test_runtime_units.c tests/test_runtime_control.c tests/test_runtime_attack.c tests/test_fuzz.c \
	tests/test_runtime_slurm.c tests/test_multinode_runtime.c \
	tests/test_multinode_train.c tests/test_multinode_elastic.c tests/test_env_launch.c \
	tests/test_env_contrib.c tests/env_launch.c
TEST_LIBS += $(HVD_INTERNAL_LIB)
# A program with its own timeline_open, control_stop, engine_start links
# against libhvd.a and runs (group symbols).
$(B)/hvd-own-symbols: $(B)/obj/tests/own_symbols.o $(B)/libhvd.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(RUNTIME_LDLIBS) -lm
TEST_PROGRAMS += $(B)/hvd-own-symbols
TEST_SRCS += tests/test_symbols.c
TEST_LDLIBS += $(RUNTIME_LDLIBS) $(CJSON_LIBS)
TEST_CFLAGS += -DHVD_HAVE_RUNTIME

endif

# The control plane's fuzz target (tests/fuzz/fuzz_control.c): libhvd's
# sources again, compiled by clang with libFuzzer, ASan and UBSan (the same
# in SAN=1 builds). tests/test_fuzz.c runs it for FUZZ_S seconds (default 5).
ifeq ($(HAVE_HVD)$(HAVE_FUZZER),11)
FUZZ_SRCS := $(filter-out runtime/transport/comm_nccl.c,$(RUNTIME_SRCS)) tests/fuzz/fuzz_control.c
$(B)/fuzz-control: $(FUZZ_SRCS) $(wildcard runtime/*.h runtime/*/*.h) tests/control_fixture.h
	$(FUZZ_CC) -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Iruntime $(RUNTIME_CFLAGS_DEPS) $(VERSION_DEF) $(filter-out -DHAVE_CUDA -DHAVE_NCCL,$(RUNTIME_DEFS)) \
		-o $@ $(FUZZ_SRCS) $(filter-out $(NCCL_LIBS) $(CUDA_LIBS),$(RUNTIME_LDLIBS)) -lm
TEST_PROGRAMS += $(B)/fuzz-control
endif

# install-libhvd: libhvd.so.0 (and the libhvd.so link -lhvd finds),
# libhvd.a, hvd.h, hvd.pc and hvd(3).
INSTALL_RULES += install-libhvd
install-libhvd_FILES := libdir:libhvd.so.0 libdir:libhvd.so libdir:libhvd.a \
	includedir:hvd.h pkgconfigdir:hvd.pc mandir:man3/hvd.3
.PHONY: install-libhvd
ifeq ($(HAVE_HVD),1)
install-libhvd: $(B)/libhvd.so.0 $(B)/libhvd.a
	$(INSTALL) -d '$(DESTDIR)$(libdir)' '$(DESTDIR)$(includedir)' '$(DESTDIR)$(pkgconfigdir)' \
		'$(DESTDIR)$(mandir)/man3'
	$(INSTALL) -m 0755 $(B)/libhvd.so.0 '$(DESTDIR)$(libdir)/libhvd.so.0'
	ln -sf libhvd.so.0 '$(DESTDIR)$(libdir)/libhvd.so'
	$(INSTALL) -m 0644 $(B)/libhvd.a '$(DESTDIR)$(libdir)/libhvd.a'
	$(INSTALL) -m 0644 runtime/hvd.h '$(DESTDIR)$(includedir)/hvd.h'
	sed -e 's|@prefix@|$(call pc_path,$(prefix))|' -e 's|@libdir@|$(call pc_path,$(libdir))|' \
		-e 's|@includedir@|$(call pc_path,$(includedir))|' \
		-e 's|@version@|$(HVD_VERSION)|' -e 's|@private@|$(strip $(RUNTIME_LDLIBS)) -lm|' \
		mk/hvd.pc.in > '$(DESTDIR)$(pkgconfigdir)/hvd.pc'
	chmod 0644 '$(DESTDIR)$(pkgconfigdir)/hvd.pc'
	$(call install_man,man/hvd.3,$(mandir)/man3/hvd.3)
else
INSTALL_MISSING += install-libhvd
install-libhvd:
	@echo "hvd: install: 'libhvd': needs PMIx and nettle: not found (install libpmix-dev and nettle-dev: make deps)" >&2; exit 1
endif
