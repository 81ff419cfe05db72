# mk/rpath.mk - RPATH=0 links without run paths: every -Wl,-rpath (both
# the -Wl,-rpath,DIR and the -Wl,-rpath -Wl,DIR forms, the latter from
# Debian's pmix.pc) and -Wl,--enable-new-dtags leave each feature's
# <X>_LIBS. Packages are built so (pkg/pkg.mk): a packaged binary finds
# its libraries in the system's default folders (Debian's libpmix2 puts
# libpmix.so.2 there as a link into pmix2/lib), never through a path
# baked in at build time. RPATH=1 (the default) changes nothing.
# Included right after $(B)/config.mk, before any module reads <X>_LIBS.

RPATH ?= 1
ifneq ($(filter-out 0 1,$(RPATH)),)
$(error hvd: build: 'RPATH=$(RPATH)': use 0 or 1)
endif
ifeq ($(RPATH),0)
comma := ,
rpath_strip = $(filter-out -Wl$(comma)-rpath$(comma)% -Wl$(comma)--enable-new-dtags,$(subst \
	-Wl$(comma)-rpath -Wl$(comma),-Wl$(comma)-rpath$(comma),$(1)))
$(foreach f,$(FEATURES),$(eval $(f)_LIBS := $$(call rpath_strip,$$($(f)_LIBS))))
endif

# DNNL_BUNDLED=1 (make deb ONEDNN=3, pkg/pkg.mk): the package ships
# libdnnl.so.3 in its own folder /usr/lib/MULTIARCH/chexnet, which no
# other program searches; chexnet finds it through the one run path this
# adds, relative to its own place ($ORIGIN/../lib/MULTIARCH/chexnet), so
# an unpacked package runs where it lies. Only programs that link oneDNN
# (DNNL_LIBS) get it.
DNNL_BUNDLED ?= 0
ifneq ($(filter-out 0 1,$(DNNL_BUNDLED)),)
$(error hvd: build: 'DNNL_BUNDLED=$(DNNL_BUNDLED)': use 0 or 1)
endif
ifeq ($(DNNL_BUNDLED),1)
DNNL_LIBS += -Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH)/chexnet'
endif
