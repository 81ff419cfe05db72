#!/bin/bash
# tests/gpu/run.sh - for a person on a GPU node: build with the GPU
# backend (warnings as errors), run the gpu test groups (gpu-unit,
# gpu-audit and gpu-emu on the CPU, gpu-ops, gpu-layers against the ref backend on the
# GPU, trainer-loss: the loss kept on the device), then as root with the
# Slurm packages installed the GPU cases of slurm-e2e on the test's own
# cluster (the gpu trainer against the cpu one; with 2+ GPUs NCCL against
# one GPU accumulating and against MPI, eval over NCCL), print a
# pass/fail/skip table, then one `chexnet bench --backend gpu` images/s
# line per precision. Numbers printed here are measured on this node;
# record them in trainer/backend/gpu/README.md with the GPU name.
#
#   tests/gpu/run.sh                 default CUDA_ARCHS (75 80 86 89 90 + PTX)
#   CUDA_ARCHS=70 CUDA_HOME=/usr/local/cuda-12.4 tests/gpu/run.sh   V100 with CUDA 12
#   BENCH_STEPS=50 BENCH_BATCH=32 tests/gpu/run.sh
#
# Exit status: non-zero when the build or any gpu test fails, or when
# gpu-layers skipped (no usable device: nothing was shown).
set -u
cd "$(dirname "$0")/../.." || exit 2

build=build
steps=${BENCH_STEPS:-30}
batch=${BENCH_BATCH:-16}
make_args=(WITH_CUDA=1 WITH_CUDNN=1 WITH_CUBLAS=1)
[ -n "${CUDA_ARCHS:-}" ] && make_args+=("CUDA_ARCHS=$CUDA_ARCHS")
[ -n "${CUDA_HOME:-}" ] && make_args+=("CUDA_HOME=$CUDA_HOME")

mkdir -p "$build"
echo "== build (${make_args[*]})"
if ! make -j"$(nproc)" "${make_args[@]}" > "$build/gpu-build.log" 2>&1; then
	tail -30 "$build/gpu-build.log"
	echo "run.sh: build failed (log: $build/gpu-build.log)" >&2
	exit 1
fi
command -v nvidia-smi > /dev/null &&
	nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader

status=0
printf '\n%-20s %7s %7s %8s\n' group passed failed skipped
# "group" or "group substring" (tests/check.sh runs the matching cases)
runs=(gpu-unit gpu-audit gpu-emu gpu-ops gpu-layers trainer-loss)
if [ "$(id -u)" = 0 ] && command -v slurmctld > /dev/null; then
	runs+=("slurm-e2e gpu_train" "slurm-e2e nccl")
else
	echo "(slurm-e2e GPU cases not run: they need root and the Slurm packages: make test-deps)"
fi
for run in "${runs[@]}"; do
	read -r group cases <<< "$run"
	out=$(tests/check.sh "$build" -g "$group" $cases 2>&1)
	rc=$?
	passed=$(grep -c '^ok ' <<< "$out")
	failed=$(grep -c '^FAIL ' <<< "$out")
	skipped=$(grep -c '^skip ' <<< "$out")
	printf '%-20s %7d %7d %8d\n' "$run" "$passed" "$failed" "$skipped"
	[ "$rc" -ne 0 ] && { status=1; grep '^FAIL ' <<< "$out" | head -20; }
	if [ "$group" = gpu-layers ] && [ "$skipped" -gt 0 ]; then
		grep '^skip ' <<< "$out" | head -3
		status=1
	fi
	[ "$group" = slurm-e2e ] && grep '^skip ' <<< "$out" | head -3
done

echo
for precision in fp32 fp16 bf16; do
	line=$("$build/chexnet" bench --backend gpu --precision "$precision" --batch "$batch" \
		--steps "$steps" --quiet 2>&1 | grep -i 'images/s' | tail -1)
	echo "bench gpu $precision batch $batch: ${line:-no images/s line (see chexnet bench output)}"
	[ -z "$line" ] && status=1
done
exit $status
