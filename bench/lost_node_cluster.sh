# bench/lost_node_cluster.sh - sourced by the lost-node benches with $src
# and $build set: prints the machine line (CPU model, count, ISA, load),
# brings up a throw-away 3-node cluster (tests/slurm/multinode.sh) of
# $build's binaries in $dir/c, torn down with $dir on exit, and leaves the
# caller in $dir with build/chexnet and contrib/. Sets dir, mn and
# SLURM_CONF. Needs root (network namespaces).
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx512f|avx2|sse4_2' | tr '\n' ' ')
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, ${isa:-no AVX}; load $(cut -d' ' -f1-3 /proc/loadavg)"
dir=$(mktemp -d /tmp/hvd-bench.XXXXXX)
chmod 755 "$dir"
mn="$src/tests/slurm/multinode.sh"
trap '"$mn" down "$dir/c" > /dev/null 2>&1; rm -rf "$dir"' EXIT
"$mn" up "$dir/c" "$build" 3 > /dev/null
export SLURM_CONF="$dir/c/slurm.conf"
cd "$dir"
mkdir build && cp "$build/chexnet" build/ && ln -s "$src/contrib" contrib
