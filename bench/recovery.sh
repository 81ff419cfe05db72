#!/usr/bin/env bash
# bench/recovery.sh [BUILD] - how long each recovery in the failure
# matrix takes: runs the slurm-multinode-elastic group
# (tests/test_multinode_elastic.c, on its own 4-node test cluster: a
# node lost and the ranks left going on in-process, a stopped rank
# relaunched, a spare taking a lost node's place, 3 -> 2 -> 1 ranks in
# two losses, a loss during recovery) and prints one row per recovery:
# what was lost, ms from the failure to the first training step after
# it, and the final parameters' distance from an uninterrupted run.
# The group's cases judge each run; this only collects the times they
# print. Exits non-zero (with the group's output) when a case failed.
# Needs root (network namespaces), as make check does.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx512f|avx2|sse4_2' | tr '\n' ' ')
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, ${isa:-no AVX}; load $(cut -d' ' -f1-3 /proc/loadavg)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! env -u SLURM_CONF HVD_SRC="$src" "$build/hvdtest" -G slurm-multinode-elastic > "$log" 2>&1; then
	cat "$log"
	exit 1
fi
# "  measured (WHAT): failure to the first step after[, HOW,] N ms[; parameters D ...]"
awk 'BEGIN { printf "%-66s %9s  %s\n", "what was lost (how the run went on)", "ms", "parameters vs. uninterrupted" }
/^  measured \(/ {
	line = substr($0, 13)
	end = index(line, "): failure to the first step after")
	if (!end)
		next
	what = substr(line, 1, end - 1)
	rest = substr(line, end + 34)
	how = rest ~ /^, in-process,/ ? ", in-process" : rest ~ /^, relaunched,/ ? ", relaunched" : ""
	match(rest, /[0-9]+ ms/)
	ms = substr(rest, RSTART, RLENGTH - 3)
	params = "-"
	if (match(rest, /parameters [^ ,]+/))
		params = substr(rest, RSTART + 11, RLENGTH - 11)
	printf "%-66s %9s  %s\n", what how, ms, params
}' "$log"
