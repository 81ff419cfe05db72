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
# and rpm own the files) but the marker $(datadir)/hvd/installed-by-package,
# which makes `make uninstall` over a package install refuse. The
# plugin depends on the Slurm major.minor of the headers it was built
# with. DEB_MAINTAINER (default: git's user.name and user.email) is the
# packages' Maintainer. `deb` and `rpm-spec` call make again in DEB_B;
# pkg-deb and pkg-rpm-spec are those inner steps, pkg-parts builds what
# install installs and nothing else (the spec's %build).

DEB_B ?= build-deb
PKG_FLAGS = B=$(DEB_B) RPATH=0 PACKAGED=1 WITH_CUDA=0 WITH_NCCL=0 WITH_CUDNN=0 WITH_CUBLAS=0
DEB_MAINTAINER ?= $(shell git config user.name) <$(shell git config user.email)>

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
# (dpkg-shlibdeps), which a DNNL_HOME one (PyPI's 3.2) is not.
deb:
	@[ -z '$(SLURM_HOME)' ] || { echo "hvd: deb: 'SLURM_HOME=$(SLURM_HOME)': the packages depend on" \
		"Debian's Slurm (slurm-wlm-basic-plugins): use make install for a site Slurm" >&2; exit 1; }
	@[ -z '$(DNNL_HOME)' ] || { echo "hvd: deb: 'DNNL_HOME=$(DNNL_HOME)': the packages depend on" \
		"Debian's oneDNN (libdnnl-dev): use make install for a oneDNN of your own" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(PKG_FLAGS) pkg-deb
rpm-spec:
	@$(MAKE) --no-print-directory $(PKG_FLAGS) pkg-rpm-spec

pkg-parts: $(PROGRAMS) $(LIBS_STATIC)

pkg-deb: pkg-parts
	rm -rf '$(B)/stage'
	libdir=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH) && \
	$(MAKE) --no-print-directory install DESTDIR='$(abspath $(B))/stage' prefix=/usr \
		libdir="$$libdir" SPANK_PLUGIN_DIR="$$libdir/slurm-wlm" > '$(B)/stage.log' || \
		{ cat '$(B)/stage.log'; exit 1; }
	pkg/deb.sh '$(B)/stage' '$(B)/deb' '$(HVD_VERSION)' '$(SLURM_VERSION)' '$(DEB_MAINTAINER)'

pkg-rpm-spec:
	range=$$(pkg/slurm-range.sh '$(SLURM_VERSION)') && set -- $$range && \
	sed -e 's/@VERSION@/$(HVD_VERSION)/' -e "s/@SLURM_MM@/$$1/" -e "s/@SLURM_NEXT@/$$2/" \
		pkg/hvd.spec.in > '$(B)/hvd.spec'
	@echo '$(B)/hvd.spec'
