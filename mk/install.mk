# mk/install.mk - where `make install` puts things (the GNU directory
# variables), the checks on them, the install manifest and `make
# uninstall`.
#
# Each part's module.mk adds an install-<part> target to INSTALL_RULES and
# lists every file it installs in install-<part>_FILES as DIRVAR:NAME
# (libdir:hvd.so: the file $(libdir)/hvd.so; a pair has no space even when
# the directory has one). Before any part writes, install-manifest merges
# the paths of the parts being installed (without DESTDIR, one a line)
# into $(datadir)/hvd/install-manifest, with each folder install makes
# (one that was not there before this install). `make uninstall`
# (mk/uninstall.sh) first checks every line against the install
# directories and the files the install rules write, with no symbolic
# link on its path under DESTDIR; one bad line and it removes nothing,
# naming each such line. Else it removes exactly the files the manifest
# names, then the recorded folders once empty, and names each file it
# could not remove. PACKAGED=1 (a package's staged install) writes the
# marker installed-by-package instead of a manifest: uninstall refuses
# there, naming apt and dnf.
# Every path in a recipe is single-quoted, so folders with spaces work; a
# quote character or a newline in any path, whitespace in
# SPANK_PLUGIN_DIR (plugstack.conf splits on it), a value that is not
# an absolute path as a whole and one with a '.' or '..' component are
# refused in one line before anything is written. A part whose dependencies were not found keeps its
# install-<part> target, which names what is missing and fails (listed in
# INSTALL_MISSING too, so it fails before the manifest is written): `make
# install` never skips a part silently. What this does not do: build, or
# decide which parts exist (the module.mk files do).

PREFIX ?= /usr/local
DESTDIR ?=
prefix ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir ?= $(exec_prefix)/bin
libdir ?= $(exec_prefix)/lib
includedir ?= $(prefix)/include
datarootdir ?= $(prefix)/share
datadir ?= $(datarootdir)
mandir ?= $(datarootdir)/man
pkgconfigdir ?= $(libdir)/pkgconfig
# hvd.so's folder: Slurm finds plugins by the path plugstack.conf names.
SPANK_PLUGIN_DIR ?= $(libdir)/slurm
# The plugstack.conf line, as an example to include or link (spank/USAGE.md),
# and the install manifest.
hvd_datadir = $(datadir)/hvd
hvd_manifest = $(hvd_datadir)/install-manifest
hvd_marker = $(hvd_datadir)/installed-by-package

INSTALL ?= install
hvd_empty :=
hvd_space := $(hvd_empty) $(hvd_empty)
hvd_tab := $(hvd_empty)	$(hvd_empty)
define hvd_newline


endef
# $(call sed_repl,TEXT): TEXT as the replacement of a sed s|...|...| command
sed_repl = $(subst |,\|,$(subst &,\&,$(subst \,\\,$(1))))
# $(call pc_path,PATH): PATH in hvd.pc, spaces escaped as pkg-config expects
pc_path = $(call sed_repl,$(subst $(hvd_space),\$(hvd_space),$(1)))
# $(call install_man,SRC,DEST): a man page with its @VERSION@ filled in
install_man = sed 's/@VERSION@/$(HVD_VERSION)/' $(1) > '$(DESTDIR)$(2)' && chmod 0644 '$(DESTDIR)$(2)'
INSTALL_DIRS := prefix exec_prefix bindir libdir includedir datarootdir datadir mandir \
	pkgconfigdir SPANK_PLUGIN_DIR

# Bad input is an error, checked only when installing or uninstalling.
# $(call install_refuse,VAR,VALUE) names the first thing wrong with VALUE.
install_name = $(if $(filter prefix,$(1)),PREFIX,$(1))
install_refuse = $(strip \
	$(if $(or $(findstring ',$(2)),$(findstring ",$(2)),$(findstring `,$(2)),$(findstring \,$(2))),\
		$(error hvd: install: '$(call install_name,$(1))=$(2)': has a quote character (' " ` or \): refused)) \
	$(if $(findstring $(hvd_newline),$(2)),\
		$(error hvd: install: '$(call install_name,$(1))': has a newline: refused)) \
	$(if $(filter /%,$(subst $(hvd_tab),_,$(subst $(hvd_space),_,$(2)))),,\
		$(error hvd: install: '$(call install_name,$(1))=$(2)': not an absolute path)) \
	$(if $(or $(findstring /./,$(2)/),$(findstring /../,$(2)/)),\
		$(error hvd: install: '$(call install_name,$(1))=$(2)': has a '.' or '..' component: refused)))
ifneq ($(filter install install-% uninstall,$(MAKECMDGOALS)),)
$(if $(value DESTDIR),$(call install_refuse,DESTDIR,$(DESTDIR)))
$(foreach d,$(INSTALL_DIRS),$(call install_refuse,$(d),$($(d))))
ifneq ($(filter-out 0 1,$(PACKAGED)),)
$(error hvd: install: 'PACKAGED=$(PACKAGED)': not 0 or 1)
endif
ifneq ($(or $(findstring $(hvd_space),$(SPANK_PLUGIN_DIR)),$(findstring $(hvd_tab),$(SPANK_PLUGIN_DIR))),)
$(error hvd: install: 'SPANK_PLUGIN_DIR=$(SPANK_PLUGIN_DIR)': has whitespace, which plugstack.conf cannot hold: set SPANK_PLUGIN_DIR to a path without)
endif
endif

INSTALL_RULES :=     # install-<part> targets
INSTALL_MISSING :=   # those of them that only say what is missing, and fail

# The parts this make installs (make install: all; else those named), and
# every path they write, each single-quoted for the shell.
install_parts = $(if $(filter install,$(MAKECMDGOALS)),$(INSTALL_RULES),$(filter $(INSTALL_RULES),$(MAKECMDGOALS)))
install_path = '$($(firstword $(subst :, ,$(1))))/$(patsubst $(firstword $(subst :, ,$(1))):%,%,$(1))'
installed_paths = $(foreach f,hvd_datadir:install-manifest $(foreach r,$(install_parts),$($(r)_FILES)),$(call install_path,$(f)))

# The manifest: the files of this install merged with those of earlier
# ones into the same datadir, so uninstall also finds theirs. Each path is
# written with its repeated slashes squeezed (a DIR of /usr/ gives
# /usr//bin), as uninstall.sh compares them.
.PHONY: install-manifest uninstall
# Each folder install makes is a line too, ending in /: only those not
# there before this install (the walk up stops at the first folder that
# exists), so uninstall never removes a folder it did not make.
# PACKAGED=1 (pkg/pkg.mk, pkg/hvd.spec.in: a staged install for a
# package): no manifest, the package manager owns the files; the marker
# $(hvd_marker) instead, which makes `make uninstall` refuse.
ifeq ($(PACKAGED),1)
install-manifest:
	$(INSTALL) -d '$(DESTDIR)$(hvd_datadir)' && \
		echo 'hvd was installed by a package: remove it with apt or dnf, not make uninstall' > '$(DESTDIR)$(hvd_marker)' && \
		chmod 0644 '$(DESTDIR)$(hvd_marker)'
else
install-manifest:
	m='$(DESTDIR)$(hvd_manifest)' && new=$$(for f in $(installed_paths); do f=$$(printf '%s' "$$f" | tr -s /); \
		d=$${f%/*}; while [ -n "$$d" ] && [ ! -d '$(DESTDIR)'"$$d" ]; do echo "$$d/"; d=$${d%/*}; done; \
		echo "$$f"; done) && $(INSTALL) -d '$(DESTDIR)$(hvd_datadir)' && \
		{ if [ -f "$$m" ]; then cat "$$m"; fi; echo "$$new"; } | LC_ALL=C sort -u > "$$m.new" && \
		chmod 0644 "$$m.new" && mv "$$m.new" "$$m"
endif

# uninstall.sh checks each manifest line against the install directories
# and every file an install rule of this tree writes (all parts).
uninstall_dirs = bindir libdir includedir datadir mandir pkgconfigdir SPANK_PLUGIN_DIR
uninstall:
	@mk/uninstall.sh '$(DESTDIR)' '$(hvd_manifest)' $(foreach d,$(uninstall_dirs),'$($(d))') -- \
		$(foreach f,hvd_datadir:install-manifest $(foreach r,$(INSTALL_RULES),$($(r)_FILES)),$(call install_path,$(f)))
