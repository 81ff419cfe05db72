# mk/install.mk - where `make install` puts things (the GNU directory
# variables), the checks on them, the install manifest and `make
# uninstall`.
#
# Each part's module.mk adds an install-<part> target to INSTALL_RULES and
# lists every file it installs in install-<part>_FILES as DIRVAR:NAME
# (libdir:hvd.so: the file $(libdir)/hvd.so; a pair has no space even when
# the directory has one). Before any part writes, install-manifest merges
# the paths of the parts being installed (without DESTDIR, one a line)
# into $(datadir)/hvd/install-manifest, with the folders install makes
# that are provably its own. A folder is recorded only when it was not
# there before this install: without DESTDIR, each such folder; with a
# DESTDIR (a staged install: fpm, checkinstall, a site's spec pack it for
# another system, which has /usr, /usr/lib, ... though the empty DESTDIR
# had not), only hvd's own $(datadir)/hvd, never a system folder.
# `make uninstall` (mk/uninstall.sh) reads the manifest once, checks every
# line against the install directories and the files the install rules
# write, with no symbolic link on its path under DESTDIR (one bad line and
# it removes nothing, naming each such line), then removes exactly the
# files it read, each checked again as it is removed, then the recorded
# folders once empty, and names each file it could not remove.
# PACKAGED=1 (a package's staged install) writes no manifest but one
# marker per package, $(datadir)/hvd/installed-by-package.d/NAME for each
# NAME in PACKAGES (default hvd: one package of the whole stage; pkg/pkg.mk
# and pkg/hvd.spec.in name their packages), so that each package ships its
# own: uninstall refuses while any marker is there, naming apt and dnf.
# Every path in a recipe is single-quoted, so folders with spaces work; a
# quote character or a newline in any path, whitespace in
# SPANK_PLUGIN_DIR (plugstack.conf splits on it), a value that is not
# an absolute path as a whole and one with a '.' or '..' component are
# refused in one line before anything is written; so are PACKAGES without
# PACKAGED=1 and a name in it that is not a package name. A part whose
# dependencies were not found keeps its install-<part> target, which names
# what is missing and fails (listed in INSTALL_MISSING too, so it fails
# before the manifest is written): `make install` never skips a part
# silently. What this does not do: build, or decide which parts exist (the
# module.mk files do).

PREFIX ?= /usr/local
DESTDIR ?=
prefix ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir ?= $(exec_prefix)/bin
libdir ?= $(exec_prefix)/lib
libexecdir ?= $(exec_prefix)/libexec
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
hvd_markers = $(hvd_datadir)/installed-by-package.d
# PACKAGED=1: the packages the stage is split into, one marker each
PACKAGES ?= hvd

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
INSTALL_DIRS := prefix exec_prefix bindir libdir libexecdir includedir datarootdir datadir mandir \
	pkgconfigdir SPANK_PLUGIN_DIR

# Bad input is an error, checked only when installing or uninstalling.
# $(call install_refuse,VAR,VALUE) names the first thing wrong with VALUE.
install_name = $(if $(filter prefix,$(1)),PREFIX,$(1))
install_refuse_quotes = $(strip \
	$(if $(or $(findstring ',$(2)),$(findstring ",$(2)),$(findstring `,$(2)),$(findstring \,$(2))),\
		$(error hvd: install: '$(call install_name,$(1))=$(2)': has a quote character (' " ` or \): refused)) \
	$(if $(findstring $(hvd_newline),$(2)),\
		$(error hvd: install: '$(call install_name,$(1))': has a newline: refused)))
install_refuse = $(strip $(call install_refuse_quotes,$(1),$(2)) \
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
$(call install_refuse_quotes,PACKAGES,$(PACKAGES))
ifneq ($(PACKAGED),1)
ifneq ($(origin PACKAGES),file)
$(error hvd: install: 'PACKAGES=$(PACKAGES)': names the packages of a PACKAGED=1 install: set PACKAGED=1 or leave it out)
endif
endif
ifeq ($(strip $(PACKAGES)),)
$(error hvd: install: 'PACKAGES=': names no package: leave it out (one package, hvd) or name each)
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
# exists), so uninstall never removes a folder it did not make; with a
# DESTDIR only $(hvd_datadir) (own: the only folder a staged install can
# prove it made, the target system having every other one).
# PACKAGED=1 (pkg/pkg.mk, pkg/hvd.spec.in: a staged install for a
# package): no manifest, the package manager owns the files; a marker per
# package in $(hvd_markers) instead, which makes `make uninstall` refuse.
ifeq ($(PACKAGED),1)
install-manifest:
	@all='$(strip $(PACKAGES))' && for n in $(foreach n,$(PACKAGES),'$(n)'); do \
		case $$n in [a-z0-9]*) ;; *) false ;; esac && case $$n in *[!a-z0-9+.-]*) false ;; esac || \
		{ echo "hvd: install: 'PACKAGES=$$all': '$$n': not a package name (a-z, 0-9, +, . and -, from a letter or digit)" >&2; \
		exit 1; }; done
	$(INSTALL) -d '$(DESTDIR)$(hvd_markers)' && for n in $(foreach n,$(PACKAGES),'$(n)'); do \
		echo "hvd was installed by a package ($$n): remove it with apt or dnf, not make uninstall" > '$(DESTDIR)$(hvd_markers)'/"$$n" && \
		chmod 0644 '$(DESTDIR)$(hvd_markers)'/"$$n" || exit 1; done
else
install-manifest:
	m='$(DESTDIR)$(hvd_manifest)' && own=$$(printf '%s' '$(hvd_datadir)' | tr -s /) && \
		new=$$(for f in $(installed_paths); do f=$$(printf '%s' "$$f" | tr -s /); \
		d=$${f%/*}; while [ -n "$$d" ] && [ ! -d '$(DESTDIR)'"$$d" ]; do \
		if [ -z '$(DESTDIR)' ] || [ "$$d" = "$$own" ]; then echo "$$d/"; fi; d=$${d%/*}; done; \
		echo "$$f"; done) && $(INSTALL) -d '$(DESTDIR)$(hvd_datadir)' && \
		{ if [ -f "$$m" ]; then cat "$$m"; fi; echo "$$new"; } | LC_ALL=C sort -u > "$$m.new" && \
		chmod 0644 "$$m.new" && mv "$$m.new" "$$m"
endif

# uninstall.sh checks each manifest line against the install directories
# and every file an install rule of this tree writes (all parts).
uninstall_dirs = bindir libdir libexecdir includedir datadir mandir pkgconfigdir SPANK_PLUGIN_DIR
uninstall:
	@mk/uninstall.sh '$(DESTDIR)' '$(hvd_manifest)' $(foreach d,$(uninstall_dirs),'$($(d))') -- \
		$(foreach f,hvd_datadir:install-manifest $(foreach r,$(INSTALL_RULES),$($(r)_FILES)),$(call install_path,$(f)))
