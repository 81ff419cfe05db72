#!/usr/bin/env bash
# bench/lost_node.sh [BUILD] [FAIL_AT] [SAVE_EVERY] - what a node lost
# mid-epoch costs: etc/sbatch/chexnet-elastic.sbatch (2 nodes x 2 ranks,
# 64 px, batch 4) on a throw-away 3-node cluster (tests/slurm/multinode.sh),
# n2 failed (link down, then SIGKILL to everything in it) once step
# FAIL_AT (default 25) is printed, HVD_TIMEOUT_S=4, --save-every SAVE_EVERY
# (default 20). Prints, from the failure:
#   elastic: the ranks left go on in their own processes (the driver's
#     --shrink: n2 is a whole node): the first step after the resume, the
#     first step past the failure point, and the steps lost (the last
#     printed step minus the step OUT/last held);
#   restart from the last checkpoint (what torchrun or a resubmitted job
#     does, queue wait not counted): from the moment the driver said what
#     the ranks left do, a
#     fresh `srun --resume` from the --save-every checkpoint taken before
#     the failure, timed to the same step past the failure point.
# Not a test: numbers only. Needs root (network namespaces).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
fail_at=${2:-25}
save_every=${3:-20}
. "$src/bench/lost_node_cluster.sh"
build/chexnet synth --out nih --count 800 --size 96 --seed 3 > /dev/null 2>&1
build/chexnet pack --data nih --out shards --size 72 > /dev/null 2>&1
args="--size 64 --threads 1 --optimizer sgd --lr 0.001 --batch 4 --seed 7 --epochs 1
	--progress-every 1 --precision fp32 --save-every $save_every"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
first_after() {   # first_after LOG PATTERN: waits for PATTERN after "resuming from"
	until awk -v p="$2" '/resuming from/ { r = 1 } r && $0 ~ p { f = 1 } END { exit !f }' "$1"; do
		sleep 0.02
	done
}

: > run.log
# shellcheck disable=SC2086
HVD_TIMEOUT_S=4 DATA=shards OUT=run sbatch --wait -N 2 -w n1,n2 --ntasks-per-node=2 \
	--gres=gpu:0 --cpus-per-task=1 -o run.log "$src/etc/sbatch/chexnet-elastic.sbatch" \
	$args > /dev/null &
job=$!
until grep -q "step $((save_every + 1))/" run.log; do sleep 0.02; done
cp -r run/last base-last   # the --save-every checkpoint: step SAVE_EVERY
until grep -q "step $fail_at/" run.log; do sleep 0.02; done
t0=$(date +%s%N)
"$mn" fail "$dir/c" n2
until grep -qE 'relaunching on|went on in their own processes' run.log; do sleep 0.02; done
relaunch_ms=$(ms "$t0")
first_after run.log ' step [0-9]+/'
first_ms=$(ms "$t0")
printed=$(sed -n '/peer lost/q; s/.*epoch 1\/1 step \([0-9]*\)\/.*/\1/p' run.log | tail -1)
held=$(sed -n 's/.*OUT\/last holds epoch 1, step \([0-9]*\) .*/\1/p' run.log | head -1)
first_after run.log " step $((printed + 1))/"
past_ms=$(ms "$t0")
wait "$job"
"$mn" revive "$dir/c" n2

mkdir base && cp -r base-last base/last
: > base.log
t1=$(date +%s%N)
# shellcheck disable=SC2086
srun -N 1 -w n1 --ntasks-per-node=2 --hvd build/chexnet train --data shards $args \
	--out base --resume base --accumulate 2 > /dev/null 2> base.log &
until grep -q " step $((printed + 1))/" base.log; do
	kill -0 $! 2> /dev/null || { echo "baseline failed:" >&2; cat base.log >&2; exit 1; }
	sleep 0.02
done
base_ms=$(( relaunch_ms + $(ms "$t1") ))
wait
sec() { awk -v m="$1" 'BEGIN { printf "%.1f", m / 1000 }'; }
printf '%-36s %9s %9s %10s\n' "n2 lost after step $printed:" "1st step" "step $((printed + 1))" "steps lost"
printf '%-36s %7s s %7s s %10d\n' "elastic (in-process)" "$(sec "$first_ms")" \
	"$(sec "$past_ms")" $((printed - held))
printf '%-36s %9s %7s s %10d\n' "restart from --save-every $save_every" "-" "$(sec "$base_ms")" \
	$((printed - save_every))
echo "# the driver heard what the ranks left do $(sec "$relaunch_ms") s after the failure (HVD_TIMEOUT_S=4 of it); a restart's queue wait is not counted"
