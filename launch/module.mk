# launch/module.mk - hvdrun (launch/hvdrun.c): N ranks on one machine,
# placed by the hvd plugin's own placement code (spank/placement.c,
# split.c, topology.c, options.c, bind.c: the pure parts, no Slurm), and
# the ssh launcher it hands a host file to (contrib/hvdrun, installed as
# $(libexecdir)/hvd/hvdrun-ssh). Needs hwloc, as the plugin does.
ifeq ($(HAVE_HWLOC),1)
LAUNCH_SRCS := launch/hvdrun.c launch/launch_plan.c launch/launch_run.c
LAUNCH_SPANK := spank/bind.c spank/options.c spank/placement.c spank/split.c spank/topology.c
LAUNCH_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(LAUNCH_SRCS) $(LAUNCH_SPANK))
$(B)/obj/launch/%.o: MODULE_CFLAGS = -Ilaunch -Ispank -DHAVE_HWLOC $(HWLOC_CFLAGS)
$(B)/obj/launch/hvdrun.o $(B)/obj/launch/launch_run.o: VERSION

$(B)/hvdrun: $(LAUNCH_OBJS)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(HWLOC_LIBS)

PROGRAMS += $(B)/hvdrun
ifeq ($(HAVE_HVD),1)   # its tests start libhvd's programs
TEST_CFLAGS += -DHVD_HAVE_HVDRUN
TEST_SRCS += tests/test_hvdrun_local.c
endif
endif

# install-hvdrun: hvdrun, hvdrun(1) and the ssh launcher it hands a host
# file to, $(libexecdir)/hvd/hvdrun-ssh (contrib/hvdrun), which hvdrun
# finds as BINDIR/../libexec: bindir and libexecdir share their prefix.
INSTALL_RULES += install-hvdrun
install-hvdrun_FILES := bindir:hvdrun libexecdir:hvd/hvdrun-ssh mandir:man1/hvdrun.1
.PHONY: install-hvdrun
ifeq ($(HAVE_HWLOC),1)
install-hvdrun: $(B)/hvdrun
	$(INSTALL) -d '$(DESTDIR)$(bindir)' '$(DESTDIR)$(libexecdir)/hvd' '$(DESTDIR)$(mandir)/man1'
	$(INSTALL) -m 0755 $(B)/hvdrun '$(DESTDIR)$(bindir)/hvdrun'
	$(INSTALL) -m 0755 contrib/hvdrun '$(DESTDIR)$(libexecdir)/hvd/hvdrun-ssh'
	$(call install_man,man/hvdrun.1,$(mandir)/man1/hvdrun.1)
else
INSTALL_MISSING += install-hvdrun
install-hvdrun:
	@echo "hvd: install: 'hvdrun': needs hwloc (libhwloc-dev or HWLOC_HOME): not found" >&2; exit 1
endif
