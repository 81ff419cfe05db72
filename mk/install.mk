# mk/install.mk - where `make install` puts things (the GNU directory
# variables), the checks on them, and `make uninstall`.
#
# Each part's module.mk adds an install-<part> target to INSTALL_RULES and
# every file it installs (its path without DESTDIR) to INSTALLED_FILES;
# `make uninstall` removes exactly those files, then the folders that are
# hvd's alone. A part whose dependencies were not found keeps its
# install-<part> target, which names what is missing and fails: `make
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
# The plugstack.conf line, as an example to include or link (spank/USAGE.md).
hvd_datadir = $(datadir)/hvd

INSTALL ?= install
# $(call install_man,SRC,DEST): a man page with its @VERSION@ filled in
install_man = sed 's/@VERSION@/$(HVD_VERSION)/' $(1) > '$(DESTDIR)$(2)' && chmod 0644 '$(DESTDIR)$(2)'
INSTALL_DIRS := prefix exec_prefix bindir libdir includedir datarootdir datadir mandir \
	pkgconfigdir SPANK_PLUGIN_DIR

# Bad input is an error, checked only when installing or uninstalling.
ifneq ($(filter install install-% uninstall,$(MAKECMDGOALS)),)
ifneq ($(DESTDIR),)
ifeq ($(filter /%,$(DESTDIR)),)
$(error hvd: install: 'DESTDIR=$(DESTDIR)': not an absolute path)
endif
endif
$(foreach d,$(INSTALL_DIRS),$(if $(filter /%,$($(d))),,\
	$(error hvd: install: '$(if $(filter prefix,$(d)),PREFIX,$(d))=$($(d))': not an absolute path)))
endif

INSTALL_RULES :=     # install-<part> targets
INSTALLED_FILES :=   # every installed file, without DESTDIR

# Folders that belong to hvd alone: uninstall removes them once empty.
HVD_OWN_DIRS = $(hvd_datadir)

.PHONY: uninstall
uninstall:
	rm -f $(foreach f,$(INSTALLED_FILES),'$(DESTDIR)$(f)')
	rmdir $(foreach d,$(HVD_OWN_DIRS),'$(DESTDIR)$(d)') 2> /dev/null || true
