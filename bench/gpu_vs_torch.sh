#!/bin/bash
# bench/gpu_vs_torch.sh - `chexnet bench --backend gpu` beside PyTorch on the
# same GPU in one command (bench, not a test): DenseNet-121/14 training
# steps on one synthetic batch, per batch size and precision: chexnet,
# PyTorch eager (bench/vs_pytorch/torch_gpu_step.py: channels_last, Adam,
# BCEWithLogits, autocast for bf16/fp16, cudnn.benchmark) and, on the rows
# COMPILE names, torch.compile; images/s, peak device memory and the
# ratio chexnet/PyTorch per row. Runs one program at a time, chexnet first.
#
# Device memory, the same way for both programs: NVML's memory.used of
# the GPU (nvidia-smi -lms 100 while the program runs), its peak minus the
# value just before the program started: everything the process took on
# the device, its CUDA context included. The GPU must be otherwise idle.
# PyTorch's own torch.cuda.max_memory_allocated() is shown beside it.
#
#   bench/gpu_vs_torch.sh [--prefix BUNDLE | BUILD]   (default build/)
#   BATCHES="16 64" PRECISIONS="fp32 bf16 fp16" SIZE=224 STEPS=30
#   (fp32-ieee: chexnet's fp32 beside PyTorch's with TF32 off: PyTorch's
#   fp32 convolutions use TF32 tensor cores by default, chexnet's never)
#   COMPILE="64:fp32 64:bf16"  (batch:precision rows with a torch.compile
#   column; each compile takes minutes; COMPILE= for none)
#   GRAPHS="16:bf16 64:bf16"  (rows with a column for chexnet with
#   --cuda-graph on, the step as one CUDA graph; GRAPHS= for none)
# Exit 2 with one line when no GPU, nvidia-smi, python3 with torch and
# torchvision, or chexnet's gpu backend is there.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
fail() { echo "gpu_vs_torch.sh: $*" >&2; exit 2; }

# PyTorch runs with the node's libraries, never the bundle's Debian ones.
if [ -n "${LD_LIBRARY_PATH+set}" ]; then
	node_env=(env LD_LIBRARY_PATH="$LD_LIBRARY_PATH")
else
	node_env=(env -u LD_LIBRARY_PATH)
fi
if [ "${1:-}" = --prefix ]; then
	env_lines=$("$top/tests/gpu/prefix_env.sh" "${2:?--prefix BUNDLE}") || exit 2
	eval "$env_lines"
	build=$(cd "$2/build" && pwd)
else
	build=${1:-$top/build}
fi
batches=${BATCHES:-16 64}
precisions=${PRECISIONS:-fp32 bf16 fp16}
size=${SIZE:-224}
steps=${STEPS:-30}
compile=${COMPILE-64:fp32 64:bf16}
graphs=${GRAPHS-16:bf16 64:bf16}
py=${PYTHON:-python3}

[ -x "$build/chexnet" ] || fail "'$build/chexnet': not built"
command -v nvidia-smi > /dev/null || fail "nvidia-smi: not on PATH: no NVIDIA GPU here"
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2> /dev/null) ||
	fail "nvidia-smi: no GPU 0"
torch=$("${node_env[@]}" "$py" -c 'import torch, torchvision; print(torch.__version__, "cuDNN", torch.backends.cudnn.version())' 2>&1) ||
	fail "$py: torch/torchvision not importable: ${torch##*$'\n'}"

used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; }

# measure OUTFILE CMD...: runs CMD with stdout+stderr to OUTFILE; prints the
# peak NVML memory.used over its run minus the value before it, in MiB.
measure() {
	local out=$1 base samples pid
	shift
	base=$(used)
	samples=$(mktemp)
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 -lms 100 > "$samples" &
	pid=$!
	"$@" > "$out" 2>&1
	local rc=$?
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	awk -v b="$base" 'BEGIN { m = b } $1 + 0 > m { m = $1 + 0 } END { print m - b }' "$samples"
	rm -f "$samples"
	return $rc
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "GPU: $gpu; $(nvidia-smi | sed -n 's/.*\(CUDA Version: *[0-9.]*\).*/\1/p'); torch $torch"
echo "chexnet: $("$build/chexnet" --version 2>&1 | head -1); DenseNet-121/14, $size px, $steps timed steps; device MiB: NVML peak memory.used minus before"
printf '%-5s %-5s | %-18s | %-28s | %-6s | %-18s | %-6s | %s\n' batch prec "chexnet img/s MiB" \
	"torch eager img/s MiB alloc" ratio "torch.compile img/s MiB" ratio "chexnet graph img/s MiB"
# chexnet_row OUT PRECISION BATCH [OPTION...]: "img/s MiB" of one bench
chexnet_row() {
	local out=$1 p=$2 b=$3 mem
	shift 3
	if mem=$(measure "$out" "$build/chexnet" bench --backend gpu --precision "${p%-ieee}" \
		--batch "$b" --size "$size" --steps "$steps" --quiet "$@"); then
		echo "$(sed -n 's/.*: \([0-9.]*\) images\/s.*/\1/p' "$out" | tail -1) $mem"
	else
		echo "failed -"
		echo "# chexnet b$b $p $*: $(grep -m1 -i 'error\|chexnet:' "$out")" >&2
	fi
}
for b in $batches; do
	for p in $precisions; do
		read -r c cm < <(chexnet_row "$tmp/c" "$p" "$b")
		g=- gm=-
		[[ " $graphs " == *" $b:$p "* ]] && read -r g gm < <(chexnet_row "$tmp/g" "$p" "$b" --cuda-graph on)
		if mem=$(measure "$tmp/t" "${node_env[@]}" "$py" "$here/vs_pytorch/torch_gpu_step.py" eager "$p" "$b" "$size" "$steps"); then
			read -r _ _ _ _ _ t ta < "$tmp/t"
			tm=$mem
		else
			t=failed tm=- ta=-
			echo "# torch eager b$b $p: $(tail -1 "$tmp/t")" >&2
		fi
		k=- km=- kr=-
		if [[ " $compile " == *" $b:$p "* ]]; then
			if mem=$(measure "$tmp/k" "${node_env[@]}" "$py" "$here/vs_pytorch/torch_gpu_step.py" compile "$p" "$b" "$size" "$steps"); then
				read -r _ _ _ _ _ k _ < "$tmp/k"
				km=$mem
				kr=$(awk -v c="$c" -v k="$k" 'BEGIN { if (c + 0 > 0 && k + 0 > 0) printf "%.2fx", c / k; else print "-" }')
			else
				k=failed
				echo "# torch.compile b$b $p: $(tail -1 "$tmp/k")" >&2
			fi
		fi
		r=$(awk -v c="$c" -v t="$t" 'BEGIN { if (c + 0 > 0 && t + 0 > 0) printf "%.2fx", c / t; else print "-" }')
		printf '%-5s %-5s | %8s %9s | %8s %9s %9s | %-6s | %8s %9s | %-6s | %8s %9s\n' "$b" "$p" \
			"$c" "$cm" "$t" "$tm" "$ta" "$r" "$k" "$km" "$kr" "$g" "$gm"
	done
done
