#!/usr/bin/env bash
# bench/allreduce.sh [BUILD] [MAX_BYTES] - run build/bench-allreduce with 2
# ranks under srun on a throw-away one-node cluster (tests/slurm/cluster.sh)
# and print its table. Not a test: numbers only. Uses $SLURM_CONF instead
# when it is already set (a cluster you started yourself).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
max=${2:-268435456}
if [ -z "${SLURM_CONF:-}" ]; then
	dir=$(mktemp -d /tmp/hvd-bench.XXXXXX)
	chmod 755 "$dir" # mktemp's 0700 keeps munged (user munge) out of its log dir
	trap '"$src/tests/slurm/cluster.sh" down "$dir/c" > /dev/null 2>&1; rm -rf "$dir"' EXIT
	"$src/tests/slurm/cluster.sh" up "$dir/c" "$build" > /dev/null
	export SLURM_CONF="$dir/c/slurm.conf"
fi
HVD_STALL_WARNING_S=0 srun -n 2 "$build/bench-allreduce" "$max" 2> >(grep -v '^  \|start-up' >&2)
