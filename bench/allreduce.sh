#!/usr/bin/env bash
# bench/allreduce.sh [BUILD] [MAX_BYTES] [REPEATS] - run build/bench-allreduce
# with 2 ranks (RANKS=n for others) under srun on a throw-away one-node
# cluster (tests/slurm/cluster.sh) and print the CPU, the load and its
# table. Not a test: numbers only. Uses $SLURM_CONF instead when it is
# already set (a cluster you started yourself).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
max=${2:-268435456}
repeats=${3:-5}
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx512f|avx2|sse4_2' | tr '\n' ' ')
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, ${isa:-no AVX}; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "${SLURM_CONF:-}" ]; then
	dir=$(mktemp -d /tmp/hvd-bench.XXXXXX)
	chmod 755 "$dir" # mktemp's 0700 keeps munged (user munge) out of its log dir
	trap '"$src/tests/slurm/cluster.sh" down "$dir/c" > /dev/null 2>&1; rm -rf "$dir"' EXIT
	"$src/tests/slurm/cluster.sh" up "$dir/c" "$build" > /dev/null
	export SLURM_CONF="$dir/c/slurm.conf"
fi
HVD_STALL_WARNING_S=0 srun -n "${RANKS:-2}" "$build/bench-allreduce" "$max" "$repeats" 2> >(grep -v '^  \|start-up' >&2)
