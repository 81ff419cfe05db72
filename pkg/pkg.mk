# pkg/pkg.mk - packages of a CPU build, versioned from VERSION:
#   make deb       Debian packages hvd-slurm-plugin, chexnet, libhvd0 and
#                  libhvd-dev in $(DEB_B)/deb/ (pkg/deb.sh, pkg/deb/files)
# It builds in its own folder, DEB_B (default build-deb), with CUDA,
# cuDNN, cuBLAS and NCCL off and RPATH=0 (mk/rpath.mk): a packaged binary
# has no run path. `make deb` stages `make install` (prefix=/usr,
# libdir=/usr/lib/MULTIARCH, hvd.so in Debian's Slurm PluginDir
# /usr/lib/MULTIARCH/slurm-wlm) in $(DEB_B)/stage and packs it. The
# plugin depends on the Slurm major.minor of the headers it was built
# with. DEB_MAINTAINER (default: git's user.name and user.email) is the
# packages' Maintainer. `deb` calls make again in DEB_B; pkg-deb is that
# inner step, pkg-parts builds what install installs and nothing else.

DEB_B ?= build-deb
PKG_FLAGS = B=$(DEB_B) RPATH=0 WITH_CUDA=0 WITH_NCCL=0 WITH_CUDNN=0 WITH_CUBLAS=0
DEB_MAINTAINER ?= $(shell git config user.name) <$(shell git config user.email)>

.PHONY: deb pkg-deb pkg-parts
deb:
	@$(MAKE) --no-print-directory $(PKG_FLAGS) pkg-deb

pkg-parts: $(PROGRAMS) $(LIBS_STATIC)

pkg-deb: pkg-parts
	@[ '$(RPATH)' = 0 ] || { echo "hvd: deb: 'RPATH=$(RPATH)': pkg-deb is a step of make deb: run that" >&2; exit 1; }
	rm -rf '$(B)/stage'
	libdir=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH) && \
	$(MAKE) --no-print-directory install DESTDIR='$(abspath $(B))/stage' prefix=/usr \
		libdir="$$libdir" SPANK_PLUGIN_DIR="$$libdir/slurm-wlm" > '$(B)/stage.log' || \
		{ cat '$(B)/stage.log'; exit 1; }
	pkg/deb.sh '$(B)/stage' '$(B)/deb' '$(HVD_VERSION)' '$(SLURM_VERSION)' '$(DEB_MAINTAINER)'
