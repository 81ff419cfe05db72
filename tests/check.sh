#!/usr/bin/env bash
# check.sh BUILD - run the whole suite (tests/runner.c) the way `make check`
# does: the runner's temp root under a dir this script owns, sanitizer
# options when BUILD is a SAN build, and a trap that tears down any test
# cluster the runner could not (crash, signal). Exit status = the runner's.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: check.sh BUILD}" && pwd)
export HVD_SRC="$src" HVD_BUILD="$build"
top=$(mktemp -d /tmp/hvdcheck.XXXXXX)
chmod 755 "$top"
export TMPDIR="$top"
# Groups run side by side on few cores: an OpenMP thread spinning at a
# barrier waits for a peer the kernel gave to another group, and doubles
# a contended training's CPU time (measured: a 4-step densenet121 beside
# one busy loop, 7.0 -> 3.7 CPU-s). Passive waiting gives the core back.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
# The tests' Python environment stays in the user's cache (tests/pyenv.sh)
# though the runner gives each run an XDG_CACHE_HOME of its own.
export HVD_PYENV_CACHE="${HVD_PYENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hvd}"
cleanup() {
	for d in "$top"/hvdtest.*/cluster; do
		[ -d "$d" ] && "$src/tests/slurm/cluster.sh" down "$d" > /dev/null 2>&1
	done
	for d in "$top"/hvdtest.*/multinode; do
		[ -d "$d" ] && "$src/tests/slurm/multinode.sh" down "$d" > /dev/null 2>&1
	done
	[ -n "${pyenv_pid:-}" ] && wait "$pyenv_pid" 2> /dev/null
	[ "${HVD_TEST_KEEP:-}" = 1 ] || rm -rf "$top"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
if [ -f "$build/.san" ]; then
	export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86:strict_string_checks=1:fast_unwind_on_malloc=0"
	# OpenMPI/PMIx unload their plugins before exit; leak reports then name
	# "<unknown module>" and lsan.supp cannot match them. Keep them loaded.
	export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
	export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp:print_suppressions=0"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87"
fi
# A whole run's groups need the tests' Python packages from its fourth
# minute on (tests/pyenv.sh: pip, mostly waiting on PyPI): installed
# beside the first groups, not inside the first group that needs them.
# pyenv.sh locks: such a group waits for this one, and installs them
# itself (and says why not) if this one failed.
if [ $# -eq 1 ] || { [ $# -eq 2 ] && [ "$2" = -q ]; }; then
	"$src/tests/pyenv.sh" "$build" > /dev/null 2>&1 &
	pyenv_pid=$!
fi
shift
"$build/hvdtest" "$@"
