# hvd - distributed CheXNet training on Slurm.
#
#   make            build everything whose dependencies were found
#   make deps       apt-get install what the build needs (root); with
#                   ONEDNN=3 also oneDNN 3.2 from PyPI into $(B)/onednn-3.2
#   make test-deps  apt-get install the test cluster's daemons and tools (root)
#   make check      deps + test-deps + build + every test (unit, then real Slurm)
#   make check-quick the same, the unit groups not marked slow (about 5 minutes)
#   make demo       deps + test-deps + build + the main job on a small data set
#   make install    PREFIX=/usr/local DESTDIR= (GNU bindir, libdir, ...: mk/install.mk)
#   make uninstall  the same variables: removes exactly what install put
#   make deb        Debian packages of a CPU build; make rpm-spec: RPM spec (pkg/pkg.mk)
#   SLURM_HOME=DIR  (and NCCL_HOME, CUDNN_HOME, HWLOC_HOME, DNNL_HOME) headers and libs there
#   ONEDNN=3        build on the oneDNN 3.2 that make deps ONEDNN=3 put in $(B)/onednn-3.2
#   SAN=1           ASan+UBSan build in build-san/
#   STRESS=1        make check with every group beside two busy loops and a
#                   listener on port 6006 (tests/runner.h, `stress`)
#   RPATH=0         link without run paths (packages: mk/rpath.mk)
#   WITH_<X>=0|1    force a feature off / make its absence an error (X: a
#                   FEATURES name below, or FUZZER: libFuzzer's targets)
#
# Dependencies are detected by mk/detect.sh (compile-and-link probes and
# pkg-config); each part lives in its own DIR/module.mk.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.SUFFIXES:

CUDA_HOME ?= /usr/local/cuda
CUDA_ARCHS ?= 75 80 86 89 90
SAN ?=
export CUDA_HOME

B ?= $(if $(filter 1,$(SAN)),build-san,build)
# ONEDNN=3: PyPI's oneDNN 3.2 in this build's own prefix (mk/onednn3.sh) as
# DNNL_HOME; unset: the system's oneDNN (Debian 12: 2.6.3) or DNNL_HOME.
ONEDNN_PREFIX := $(abspath $(B))/onednn-3.2
ifneq ($(filter-out 3,$(ONEDNN)),)
$(error hvd: build: 'ONEDNN=$(ONEDNN)': use 3 (oneDNN 3.2 from PyPI in $(ONEDNN_PREFIX)) or leave it unset)
endif
ifeq ($(ONEDNN),3)
ifneq ($(DNNL_HOME),)
$(error hvd: build: 'ONEDNN=3' and 'DNNL_HOME=$(DNNL_HOME)': give one)
endif
ifeq ($(filter deps,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(ONEDNN_PREFIX)/.done),)
$(error hvd: build: 'ONEDNN=3': '$(ONEDNN_PREFIX)': not installed: run make deps ONEDNN=3$(if $(filter-out build,$(B)), B=$(B)) first)
endif
endif
DNNL_HOME := $(ONEDNN_PREFIX)
endif
FEATURES := CUDA CUDNN CUBLAS NCCL PMIX NETTLE MPI HWLOC DNNL SLURM SPNG TURBOJPEG CJSON ZLIB CAIRO GDCM YAML
# $(shell) does not see exported variables before make 4.4: pass them.
DETECT_ENV := $(foreach f,$(FEATURES),WITH_$(f)='$(WITH_$(f))') CC='$(CC)' CXX='$(CXX)' CUDA_HOME='$(CUDA_HOME)' \
	SLURM_HOME='$(SLURM_HOME)' NCCL_HOME='$(NCCL_HOME)' CUDNN_HOME='$(CUDNN_HOME)' HWLOC_HOME='$(HWLOC_HOME)' DNNL_HOME='$(DNNL_HOME)' \
	WITH_FUZZER='$(WITH_FUZZER)' FUZZ_CC='$(FUZZ_CC)'

# Targets that only orchestrate (they call make again after installing
# packages) must not detect: packages may still be missing at this point.
ORCHESTRATE := deps test-deps check demo clean help deb rpm-spec
ifneq ($(filter-out $(ORCHESTRATE),$(or $(MAKECMDGOALS),all)),)
# ✓/✗ lines go to the terminal; an error line comes back as make's one error.
DETECT_ERR := $(shell $(DETECT_ENV) mk/detect.sh $(B) 3>&1 1>&2 2>&3)
ifneq ($(DETECT_ERR),)
$(error $(DETECT_ERR))
endif
include $(B)/config.mk
include mk/rpath.mk
endif
# The emulated device replaces the CUDA libraries (tests/gpu_emu/emu.mk).
ifeq ($(GPU_EMU),1)
include tests/gpu_emu/emu.mk
endif

WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wno-format-truncation -Werror
OPT ?= -O2 -g
# The version, in one place (VERSION): chexnet --version and its start-up
# line, hvd.so's per-task line, hvd_version().
HVD_VERSION := $(shell cat VERSION)
VERSION_DEF := -DHVD_VERSION='"$(HVD_VERSION)"'
CFLAGS_BASE := -std=gnu11 $(OPT) $(WARN) -pthread $(VERSION_DEF)
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
CFLAGS_ALL = $(CFLAGS_BASE) $(SAN_FLAGS) $(CFLAGS)
LDFLAGS_ALL = -pthread $(SAN_FLAGS) $(LDFLAGS)

# Each module adds to these.
PROGRAMS :=       # programs to build and install
TEST_PROGRAMS :=  # helper programs the tests run (built, never installed)
LIBS_STATIC :=    # static libraries
TEST_SRCS :=      # sources linked into the test runner
TEST_LIBS :=      # libraries (and objects) the runner needs
TEST_LDLIBS :=    # link flags the runner needs

# Generic compile rule: $(B)/obj/DIR/file.o from DIR/file.c; C++ (the
# GDCM shim only) from DIR/file.cc.
$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(MODULE_CFLAGS) -MMD -MP -c $< -o $@
$(B)/obj/%.o: %.cc
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(OPT) $(WARN) -pthread $(SAN_FLAGS) $(CXXFLAGS) $(MODULE_CXXFLAGS) -MMD -MP -c $< -o $@

# Install rules: mk/install.mk (directories, uninstall), then one
# install-<part> per module.
include mk/install.mk
include spank/module.mk
include runtime/module.mk
include check/module.mk
include launch/module.mk
include trainer/data.mk
include trainer/eval.mk
include trainer/module.mk
include tests/module.mk
include pkg/pkg.mk

# check, check-quick and demo build with one job per CPU unless make was
# given -j itself (its jobserver then decides): a serial build of this
# tree takes a minute and a half of a 2-core machine, half of it idle.
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

.PHONY: all deps test-deps check check-quick demo install clean help
# The longest single jobs (nvcc's objects for every architecture, the
# emulated device, each fuzzer's one clang command) first: make -j starts
# them at once and the short compiles fill the other cores around them.
SLOW_FIRST = $(GPU_BACKEND_CU_OBJS) $(filter $(B)/fuzz-%,$(TEST_PROGRAMS))
all: $(SLOW_FIRST) $(PROGRAMS) $(TEST_PROGRAMS) $(LIBS_STATIC) $(B)/hvdtest
ifeq ($(SAN),1)
all: $(B)/.san
$(B)/.san:
	@mkdir -p $(B) && touch $@
endif

deps:
	@mk/deps.sh build
ifeq ($(ONEDNN),3)
	@mk/onednn3.sh '$(ONEDNN_PREFIX)' && echo "hvd: deps: oneDNN 3.2 in '$(ONEDNN_PREFIX)': build with make ONEDNN=3$(if $(filter-out build,$(B)), B=$(B))"
endif

test-deps:
	@mk/deps.sh test

# The suite builds the tree again (emulated device, packages, build
# cases): both compile through ccache (mk/with-ccache.sh).
check:
	@mk/deps.sh build && mk/deps.sh test
	@mk/with-ccache.sh $(B) $(MAKE) --no-print-directory $(BUILD_JOBS) all SAN=$(SAN)
	@HVD_STRESS=$(STRESS) mk/with-ccache.sh $(B) tests/check.sh $(B)

# The edit-compile-test loop: the unit groups not marked slow (tests/groups.h),
# about 5 minutes; make check stays the whole suite.
check-quick:
	@mk/deps.sh build && mk/deps.sh test
	@mk/with-ccache.sh $(B) $(MAKE) --no-print-directory $(BUILD_JOBS) all SAN=$(SAN)
	@mk/with-ccache.sh $(B) tests/check.sh $(B) -q

demo:
	@mk/deps.sh build && mk/deps.sh test
	@$(MAKE) --no-print-directory $(BUILD_JOBS) all SAN=$(SAN)
	@tests/demo.sh $(B)

install: $(INSTALL_RULES)
# A missing part fails before anything is written; then the manifest, so a
# part that fails later leaves its files' names there.
$(filter-out $(INSTALL_MISSING),$(INSTALL_RULES)): | install-manifest
install-manifest: $(INSTALL_MISSING)

clean:
	rm -rf build build-san build-deb build-deb-onednn3

help:
	@sed -n '3,20p' Makefile

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
