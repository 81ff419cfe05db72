#!/bin/bash
# tests/gpu/lease.sh BUNDLE OUT - a whole GPU lease in one command, for a
# node lent for minutes: the steps of trainer/backend/gpu/README.md ('A
# GPU lease') in order of worth, each under its own deadline and all
# under LEASE_S seconds (default 500), so what ran comes back even when
# the lease ends first. After each step OUT holds lease.txt (everything
# printed, step by step) and logs.tar.gz (every step's own logs).
#   1. tests/gpu/run.sh --prefix BUNDLE on the device groups (gpu-ops, gpu-graph,
#      gpu-layers, trainer-loss's gpu cases; the probe and the one-rank
#      NCCL training come with it; the emulated groups run in make check)
#   2. hvd-nccl-calls: the NCCL calls comm_nccl.c makes, on the node's
#      library (compare with the emulated NCCL's output, same program)
#   3. tests/gpu/reference_run.sh gpu, one prediction and the strict
#      PyTorch load of its checkpoint (tests/ref/torch_check.py)
#   4. bench/gpu_vs_torch.sh: chexnet beside PyTorch eager (no compile)
#   5. where a batch-64 fp32 step's device time goes, per kernel name,
#      for chexnet and PyTorch (ncu, one metric, the first 3000 kernels)
#   6. the loader: training from 1024-px PNGs with 1-8 loader threads,
#      and bench/loader/run.sh, if time is left
#   7. torch.compile at batch 64 bf16, if time is left
# A step that would not fit in the time left is skipped, and says so.
# LEASE_STEPS (default "groups nccl reference bench profile loader
# compile")
# picks steps; BATCHES and PRECISIONS pass to the bench; REF_SEEDS
# (default 1) are the reference run's training seeds (the strict load
# and the prediction use the first).
# Exit status: 0 when every step ran and passed, else 1.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
bundle=$(cd "${1:?usage: tests/gpu/lease.sh BUNDLE OUT}" && pwd) || exit 2
out=${2:?usage: tests/gpu/lease.sh BUNDLE OUT}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
budget=${LEASE_S:-500}
begin=$(date +%s)
work=$(mktemp -d /tmp/hvd-lease.XXXXXX)
build=$bundle/build
status=0
exec > >(tee -a "$out/lease.txt") 2>&1

left() { local l=$((budget - ($(date +%s) - begin))); echo $((l > 0 ? l : 0)); }

# step KEY NAME NEED LIMIT CMD...: CMD under min(LIMIT, time left)
# seconds, skipped when less than NEED seconds are left or LEASE_STEPS
# does not name KEY.
step() {
	local key=$1 name=$2 need=$3 limit=$4 t0 rc
	shift 4
	[[ " ${LEASE_STEPS:-groups nccl reference bench profile loader compile} " == *" $key "* ]] || return 0
	[ "$limit" -gt "$(left)" ] && limit=$(left)
	if [ "$(left)" -lt "$need" ]; then
		echo "== $name: skipped ($(left) s left, needs $need)"
		status=1
		return
	fi
	echo "== $name (at $(($(date +%s) - begin)) s, limit $limit s)"
	t0=$(date +%s)
	timeout -k 5 "$limit" "$@"
	rc=$?
	pkill -f 'nvidia-smi --query-gpu=memory.used' 2> /dev/null
	echo "== $name: exit $rc in $(($(date +%s) - t0)) s"
	[ "$rc" = 0 ] || status=1
	tar -C "$work" -czf "$out/logs.tar.gz" --exclude=./ref/nih --exclude=./ref/shards \
		--exclude='*.safetensors' --exclude='*.png' . 2> /dev/null
}

nccl_calls() {
	eval "$(tests/gpu/prefix_env.sh "$bundle" 2> /dev/null)" || return 1
	"$build/hvd-nccl-calls"
}

reference() {
	local ref=$work/ref seed seeds=${REF_SEEDS:-1} run=run-gpu
	[ "${seeds%% *}" = 1 ] || run=run-gpu-seed${seeds%% *}
	(
		eval "$(tests/gpu/prefix_env.sh "$bundle" 2> /dev/null)" || exit 1
		for seed in $seeds; do
			SEED=$seed REF_WORK=$ref tests/gpu/reference_run.sh gpu "$build" || exit 1
		done
		"$build/chexnet" synth --out "$ref/one" --count 1 --size 73 --seed 2 > /dev/null &&
			"$build/chexnet" predict --checkpoint "$ref/$run/last" --backend gpu \
				"$ref/one/images/00000001_000.png" > "$ref/pred.txt"
	) || return 1
	python3 tests/ref/torch_check.py "$ref/$run/last" 64 "$ref/one/images/00000001_000.png" "$ref/pred.txt"
}

# Each program's device time by kernel name under ncu (one metric,
# gpu__time_duration, so one replay pass): the ten largest shares.
profile() {
	local ncu prog
	ncu=$(command -v ncu || find /opt/nvidia /usr/local/cuda/bin -name ncu -type f 2> /dev/null | head -1)
	[ -n "$ncu" ] || { echo "profile: no ncu on this node"; return 1; }
	local timed=("$ncu" --metrics gpu__time_duration.sum --launch-count 3000 --csv --print-units base)
	for prog in chexnet torch; do
		if [ "$prog" = chexnet ]; then
			(eval "$(tests/gpu/prefix_env.sh "$bundle" 2> /dev/null)" && "${timed[@]}" \
				"$build/chexnet" bench --backend gpu --precision fp32 --batch 64 --steps 1 --quiet)
		else
			"${timed[@]}" python3 bench/vs_pytorch/torch_gpu_step.py eager fp32 64 224 1
		fi > "$work/ncu-$prog.csv" 2> "$work/ncu-$prog.err"
		echo "-- $prog: device time by kernel (ncu, batch 64 fp32, first 3000 kernels)"
		python3 - "$work/ncu-$prog.csv" << 'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
head = rows[0] if rows else []
if "Kernel Name" not in head or "Metric Value" not in head:
    sys.exit("no ncu table: see ncu-*.err")
k, v = head.index("Kernel Name"), head.index("Metric Value")
total, by = 0.0, {}
for r in rows[1:]:
    t = float(r[v].replace(",", ""))
    name = r[k].split("(")[0].split("<")[0].strip()[:60]
    by[name] = by.get(name, 0.0) + t
    total += t
print(f"  {len(rows) - 1} kernels, {total / 1e6:.1f} ms in all")
for name, t in sorted(by.items(), key=lambda x: -x[1])[:10]:
    print(f"  {100 * t / total:5.1f}%  {t / 1e6:8.2f} ms  {name}")
PY
	done
}

# Training on the GPU straight from 1024-px PNGs (direct mode) with 1, 2,
# 4 and 8 loader threads: images/s and the data-wait share; then the
# loader alone (bench/loader/run.sh).
loader() {
	local t size=${LOADER_SIZE:-224}
	eval "$(tests/gpu/prefix_env.sh "$bundle" 2> /dev/null)" || return 1
	"$build/chexnet" synth --out "$work/png1024" --count 600 --size 1024 --seed 1 > /dev/null || return 1
	for t in 1 2 4 8; do
		echo "direct mode, $t loader threads: $("$build/chexnet" train --data "$work/png1024" --backend gpu \
			--size "$size" --batch 32 --steps "${LOADER_STEPS:-12}" --loader-threads "$t" \
			--out "$work/direct-$t" 2>&1 | grep 'overall:')"
	done
	rm -rf "$work/png1024" "$work"/direct-*/last "$work"/direct-*/best
	THREADS="1 2 4 8" bench/loader/run.sh "$build" 600 --backend gpu --size "$size"
}

export bundle build work REF_SEEDS
export -f nccl_calls reference profile loader
echo "lease.sh: bundle $(sed -n 's/^commit[: ]*//p' "$bundle/MANIFEST" | head -1), $(nproc) CPUs, budget $budget s"
step groups "device groups" 60 200 env RUN_LOGS="$work/run" tests/gpu/run.sh --prefix "$bundle" --no-bench \
	--only gpu-ops --only gpu-layers --only gpu-graph --only 'trainer-loss gpu_'
step nccl "NCCL calls" 20 45 bash -c nccl_calls
step reference "reference run" 60 160 bash -c reference
step bench "bench beside PyTorch" 90 220 env BATCHES="${BATCHES:-64}" \
	PRECISIONS="${PRECISIONS:-fp32 fp32-ieee bf16 fp16}" COMPILE= \
	bench/gpu_vs_torch.sh --prefix "$bundle"
step profile "device time by kernel" 90 180 bash -c profile
step loader "loader" 60 100 bash -c loader
step compile "torch.compile" 120 200 env BATCHES=64 PRECISIONS=bf16 COMPILE=64:bf16 \
	bench/gpu_vs_torch.sh --prefix "$bundle"
echo "lease.sh: $([ $status = 0 ] && echo passed || echo 'not all passed') in $(($(date +%s) - begin)) s"
rm -rf "$work"
exit $status
