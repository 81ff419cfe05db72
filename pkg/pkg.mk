# pkg/pkg.mk - packages of a CPU build, versioned from VERSION:
#   make deb       Debian packages hvd-slurm-plugin, chexnet, libhvd0 and
#                  libhvd-dev in $(DEB_B)/deb/ (pkg/deb.sh, pkg/deb/files)
#   make rpm-spec  the RPM spec for RHEL-family sites, $(DEB_B)/hvd.spec
#                  (from pkg/hvd.spec.in; not a release artefact)
# Both build in their own folder, DEB_B (default build-deb), with CUDA,
# cuDNN, cuBLAS and NCCL off and RPATH=0 (mk/rpath.mk): a packaged binary
# has no run path. `make deb` stages `make install` (prefix=/usr,
# libdir=/usr/lib/MULTIARCH, hvd.so in Debian's Slurm PluginDir
# /usr/lib/MULTIARCH/slurm-wlm) in $(DEB_B)/stage and packs it; with
# PACKAGED=1 (mk/install.mk) that install writes no install manifest (dpkg
# and rpm own the files) but one marker per package (PACKAGES: the names of
# pkg/deb/*.control), $(datadir)/hvd/installed-by-package.d/PACKAGE, which
# that package ships: `make uninstall` refuses while any one is there. The
# plugin depends on the Slurm major.minor of the headers it was built
# with. DEB_MAINTAINER (default: git's user.name and user.email) is the
# packages' Maintainer; DEB_XZ_LEVEL (0-9, default 6 as dpkg-deb's) their
# compression. `deb` and `rpm-spec` call make again in DEB_B;
# pkg-deb and pkg-rpm-spec are those inner steps, pkg-parts builds what
# install installs and nothing else (the spec's %build).
#   make deb ONEDNN=3  (after make deps ONEDNN=3) chexnet built on oneDNN
#                  3.2 and bundling it: the package ships the prefix's
#                  libdnnl.so.3 in /usr/lib/MULTIARCH/chexnet, found
#                  through chexnet's one run path (DNNL_BUNDLED=1,
#                  mk/rpath.mk), oneDNN's licence and notices in its
#                  copyright, and says so in its description; it does not
#                  depend on Debian's libdnnl. Built in build-deb-onednn3.

DEB_B ?= $(if $(filter 3,$(ONEDNN)),build-deb-onednn3,build-deb)
PKG_FLAGS = B=$(DEB_B) RPATH=0 PACKAGED=1 WITH_CUDA=0 WITH_NCCL=0 WITH_CUDNN=0 WITH_CUBLAS=0 \
	$(if $(filter 3,$(ONEDNN)),ONEDNN=3 ONEDNN_PREFIX='$(ONEDNN_PREFIX)' DNNL_BUNDLED=1)
DEB_MAINTAINER ?= $(shell git config user.name) <$(shell git config user.email)>
# the Debian packages, each shipping its own marker (pkg/deb/files)
DEB_PACKAGES = $(sort $(basename $(notdir $(wildcard pkg/deb/*.control))))

# The inner steps, called by hand without the flags, would rebuild DEB_B
# with CUDA and run paths: refused before anything is built.
ifneq ($(filter pkg-deb pkg-rpm-spec,$(MAKECMDGOALS)),)
ifneq ($(B) $(RPATH) $(WITH_CUDA) $(PACKAGED),$(DEB_B) 0 0 1)
$(error hvd: package: '$(filter pkg-deb pkg-rpm-spec,$(MAKECMDGOALS))': a step of make deb or make rpm-spec: run those)
endif
endif

.PHONY: deb rpm-spec pkg-deb pkg-rpm-spec pkg-parts
# The plugin's dependency names Debian's Slurm: a site Slurm (SLURM_HOME)
# installs with make install instead; chexnet's names Debian's oneDNN
# (dpkg-shlibdeps), which a DNNL_HOME one is not (ONEDNN=3 bundles its own).
deb:
	@[ -z '$(SLURM_HOME)' ] || { echo "hvd: deb: 'SLURM_HOME=$(SLURM_HOME)': the packages depend on" \
		"Debian's Slurm (slurm-wlm-basic-plugins): use make install for a site Slurm" >&2; exit 1; }
	@[ -n '$(filter 3,$(ONEDNN))' ] || [ -z '$(DNNL_HOME)' ] || { echo "hvd: deb: 'DNNL_HOME=$(DNNL_HOME)': the packages depend on" \
		"Debian's oneDNN (libdnnl-dev) or bundle PyPI's 3.2 (ONEDNN=3): use make install for a oneDNN" \
		"of your own" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(PKG_FLAGS) PACKAGES='$(DEB_PACKAGES)' pkg-deb
rpm-spec:
	@$(MAKE) --no-print-directory $(PKG_FLAGS) pkg-rpm-spec

pkg-parts: $(PROGRAMS) $(LIBS_STATIC)

pkg-deb: pkg-parts
	rm -rf '$(B)/stage'
	libdir=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH) && \
	$(MAKE) --no-print-directory install DESTDIR='$(abspath $(B))/stage' prefix=/usr \
		libdir="$$libdir" SPANK_PLUGIN_DIR="$$libdir/slurm-wlm" > '$(B)/stage.log' || \
		{ cat '$(B)/stage.log'; exit 1; }
	DEB_XZ_LEVEL='$(DEB_XZ_LEVEL)' pkg/deb.sh '$(B)/stage' '$(B)/deb' '$(HVD_VERSION)' '$(SLURM_VERSION)' '$(DEB_MAINTAINER)' \
		$(if $(filter 1,$(DNNL_BUNDLED)),'$(ONEDNN_PREFIX)')

pkg-rpm-spec:
	range=$$(pkg/slurm-range.sh '$(SLURM_VERSION)') && set -- $$range && \
	sed -e 's/@VERSION@/$(HVD_VERSION)/' -e "s/@SLURM_MM@/$$1/" -e "s/@SLURM_NEXT@/$$2/" \
		pkg/hvd.spec.in > '$(B)/hvd.spec'
	@echo '$(B)/hvd.spec'
