#!/usr/bin/env bash
# bench/lost_node_gpu.sh [BUILD-emu] - a node lost under the gpu backend:
# etc/sbatch/chexnet-elastic.sbatch, 3 nodes x 1 rank, --backend gpu over
# NCCL, on the emulated device (make GPU_EMU=1 B=build-emu: CUDA, cuDNN
# and NCCL emulated, tests/gpu_emu) and a throw-away 3-node cluster of
# that build (tests/slurm/multinode.sh); n3 failed (link down, then
# SIGKILL to everything in it) once step 3 is printed, HVD_TIMEOUT_S=20
# (an emulated step takes seconds, so the ranks drift apart by more than
# 4 s). Prints the time from the failure to the first step after the
# resume, and what run.json says of the ranks left: how they went on and
# the runtime's library ("NCCL 2.28.9, shrunk from 3 ranks": ncclCommShrink
# of the revoked communicator, no new one).
# Not a test: the emulated DenseNet is too slow for make check. Needs root.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build-emu}" && pwd)
. "$src/bench/lost_node_cluster.sh"
export HVD_EMU_TOPOLOGY="$src/tests/topo/two-cpu-4gpu.xml"
build/chexnet synth --out nih --count 120 --size 64 --seed 3 > /dev/null 2>&1
build/chexnet pack --data nih --out shards --size 40 > /dev/null 2>&1
: > run.log
HVD_BACKEND=nccl HVD_TIMEOUT_S=20 DATA=shards OUT=run sbatch --wait -N 3 -w n1,n2,n3 \
	--ntasks-per-node=1 --gres=gpu:0 --cpus-per-task=1 -o run.log \
	"$src/etc/sbatch/chexnet-elastic.sbatch" --backend gpu --size 32 --optimizer sgd \
	--lr 0.001 --batch 4 --seed 7 --epochs 1 --progress-every 1 --precision fp32 > /dev/null &
job=$!
until grep -q 'step 3/' run.log; do sleep 0.05; done
t0=$(date +%s%N)
"$mn" fail "$dir/c" n3
until awk '/resuming from/ { r = 1 } r && / step [0-9]+\// { f = 1 } END { exit !f }' run.log; do
	sleep 0.05
done
echo "failure to the first step after: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
wait "$job" || echo "job: exit $?"
grep -E 'goes on as|went on in their own' run.log || true
grep -oE '"(went_on|runtime_library|outcome)":\s*"[^"]*"' run/run.json || true
