# spank/module.mk - the hvd SPANK plugin (build/hvd.so), its unit-tested
# parts and install-spank. The .so is built by its own rule, never with
# sanitizer flags (an ASan object cannot load into slurmstepd): -fPIC,
# hidden visibility, hardening, a version script exporting only plugin_*
# and slurm_spank_*, libhwloc linked, libslurm not (Slurm resolves spank_*
# when loading).
# The test runner compiles options.c, placement.c and topology.c through
# the normal pattern rule (so SAN=1 covers them).

SPANK_DEFS := $(if $(filter 1,$(HAVE_HWLOC)),-DHAVE_HWLOC)
$(B)/obj/spank/%.o: MODULE_CFLAGS = -Ispank $(SPANK_DEFS) $(HWLOC_CFLAGS)

TEST_SRCS += spank/bind.c spank/options.c spank/placement.c spank/split.c spank/topology.c spank/step_cpus.c \
	tests/test_spank_options.c tests/test_spank_placement.c tests/test_spank_real_topo.c \
	tests/test_spank_slurm.c
TEST_LDLIBS += $(HWLOC_LIBS)
ifeq ($(HAVE_HWLOC),1)
TEST_SRCS += tests/test_hwloc_gl.c
TEST_CFLAGS += -DHVD_HAVE_HWLOC
endif

# The Slurm version of the headers used (mk/detect.sh): --hvd=help and the
# verbose line name it; plugin.c checks it against the headers it sees.
SLURM_VERSION_DEF := -DHVD_SLURM_VERSION='"$(SLURM_VERSION)"' -DHVD_SLURM_VERSION_NUMBER=$(SLURM_VERSION_NUMBER)
ifeq ($(HAVE_SLURM),1)
TEST_CFLAGS += -DHVD_SLURM_VERSION='"$(SLURM_VERSION)"'
$(B)/obj/tests/test_spank_slurm.o: $(B)/config.mk
endif

ifeq ($(HAVE_SLURM)$(HAVE_HWLOC),11)
SPANK_SO_SRCS := spank/plugin.c spank/task.c spank/bind.c spank/options.c spank/placement.c spank/split.c spank/topology.c \
	spank/step_cpus.c
SPANK_SO_OBJS := $(patsubst spank/%.c,$(B)/obj/spank-so/%.o,$(SPANK_SO_SRCS))
SPANK_SO_CFLAGS := -std=gnu11 $(OPT) $(WARN) -fPIC -fvisibility=hidden \
	-fstack-protector-strong $(if $(filter -O0,$(OPT)),,-D_FORTIFY_SOURCE=2) -fno-strict-aliasing \
	-Ispank $(SPANK_DEFS) $(SLURM_CFLAGS) $(HWLOC_CFLAGS) $(VERSION_DEF) $(SLURM_VERSION_DEF) $(CFLAGS)
SPANK_SO_LDFLAGS := -shared -Wl,--version-script=spank/hvd.map -Wl,-z,relro -Wl,-z,now \
	-Wl,-z,noexecstack -Wl,--as-needed $(LDFLAGS)

$(B)/obj/spank-so/%.o: spank/%.c
	@mkdir -p $(@D)
	$(CC) $(SPANK_SO_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/spank-so/task.o: VERSION
$(B)/hvd.so: $(SPANK_SO_OBJS) spank/hvd.map
	$(CC) $(SPANK_SO_LDFLAGS) -o $@ $(SPANK_SO_OBJS) $(HWLOC_LIBS)

PROGRAMS += $(B)/hvd.so
# Another Slurm's headers (SLURM_HOME) rebuild the plugin: its version is
# compiled in (SPANK_PLUGIN), and Slurm refuses a plugin of another version.
$(SPANK_SO_OBJS): $(B)/config.mk
endif

# install-spank: hvd.so, hvd(8) and the plugstack.conf line as an example
# in $(datadir)/hvd (never /etc: the admin includes or links it).
INSTALL_RULES += install-spank
install-spank_FILES := SPANK_PLUGIN_DIR:hvd.so hvd_datadir:plugstack.conf mandir:man8/hvd.8
.PHONY: install-spank
ifeq ($(HAVE_SLURM)$(HAVE_HWLOC),11)
install-spank: $(B)/hvd.so
	$(INSTALL) -d '$(DESTDIR)$(SPANK_PLUGIN_DIR)' '$(DESTDIR)$(hvd_datadir)' '$(DESTDIR)$(mandir)/man8'
	$(INSTALL) -m 0755 $(B)/hvd.so '$(DESTDIR)$(SPANK_PLUGIN_DIR)/hvd.so'
	sed 's|@PLUGIN@|$(call sed_repl,$(SPANK_PLUGIN_DIR))/hvd.so|' etc/plugstack.conf.d/hvd.conf > '$(DESTDIR)$(hvd_datadir)/plugstack.conf'
	chmod 0644 '$(DESTDIR)$(hvd_datadir)/plugstack.conf'
	$(call install_man,man/hvd.8,$(mandir)/man8/hvd.8)
else
INSTALL_MISSING += install-spank
install-spank:
	@echo "hvd: install: 'hvd.so': needs$(if $(filter 1,$(HAVE_SLURM)),, Slurm's slurm/spank.h (libslurm-dev or SLURM_HOME))$(if $(filter 1,$(HAVE_HWLOC)),, hwloc (libhwloc-dev or HWLOC_HOME)): not found" >&2; exit 1
endif
