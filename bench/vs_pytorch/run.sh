#!/bin/sh
# bench/vs_pytorch/run.sh - chexnet's cpu backend against PyTorch's best CPU
# configurations on the CheXNet training step (DenseNet-121/14, batch 16,
# 224, 2 threads), alternating the two so both see the same machine state.
# Runs each row natively and again under every ISA cap below the CPU's
# (AVX512_CORE, AVX2, AVX, SSE41: ONEDNN_MAX_CPU_ISA for both oneDNNs,
# ATEN_CPU_CAPABILITY avx512, avx2 or default for PyTorch's own kernels),
# and shows which kernel PyTorch's oneDNN dispatched under each. bf16 rows
# only where chexnet has bf16 kernels (it refuses bf16 below AVX-512).
# CAPS="AVX2 SSE41" runs only those caps.
# PyTorch is 2.15.0 with torchvision 0.29.2 from PyPI, installed on first
# use into a venv of its own ($HVD_TORCH_VENV, default .venv beside this script;
# the system's Python is not touched).
# Prints the ISA, images/s, ratios and peak RSS; with PROFILE=1 also the
# per-layer profile of each chexnet precision; with MAXBATCH=1 the largest
# fp32 batch each program trains in 90 % of the memory available now
# (peak RSS at batch 8 and 16 extrapolated, then one step at that batch
# to show it fits; MAXBATCH=only: that alone). Bench, not a test.
#   bench/vs_pytorch/run.sh [build-dir] [steps]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
steps=${2:-5}
venv=${HVD_TORCH_VENV:-$here/.venv}
py=$venv/bin/python3

if ! "$py" -c 'import torch, torchvision; assert torch.__version__.split("+")[0] == "2.15.0"' 2>/dev/null; then
	echo "vs_pytorch: installing torch 2.15.0 and torchvision 0.29.2 from PyPI into $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q torch==2.15.0 torchvision==0.29.2
fi
[ -x "$build/chexnet" ] || { echo "hvd: vs_pytorch: '$build/chexnet': not built (run make)" >&2; exit 1; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "machine: $cpu, $(nproc) CPUs allowed; torch $($py -c 'import torch; print(torch.__version__)') ($($py -c 'import re, torch; m = re.search(r"MKL-DNN v([0-9.]+)", torch.__config__.show()); print("oneDNN " + (m.group(1) if m else "?"))'))"

chex() { # precision extra-flags -> "img/s rss isa"
	"$build/chexnet" bench --backend cpu --precision "$1" --batch 16 --size 224 \
		--threads 2 --steps "$steps" --quiet $2 2>&1 |
	sed -n 's/.*(\([a-z0-9_]*\), \([0-9]*\)-channel blocks).*: \([0-9.]*\) images\/s.*peak RSS \([0-9]*\) MiB.*/\3 \4 \1\/\2c/p'
}

# The implementation PyTorch's oneDNN runs a 3x3 convolution with.
torch_dispatch() {
	ONEDNN_VERBOSE=1 DNNL_VERBOSE=1 $py -c 'import torch
c = torch.nn.Conv2d(64, 64, 3, padding=1)
with torch.no_grad(): c(torch.randn(2, 64, 28, 28).to(memory_format=torch.channels_last))' 2>&1 |
	grep -m1 -o 'convolution,[^,]*' | sed 's/convolution,//' || echo "no oneDNN verbose output"
}

row() { # precision
	c=$(chex "$1" "")
	if [ -z "$c" ]; then # chexnet refuses it (bf16 below AVX-512), and so does PyTorch's oneDNN
		echo "# $1: not run: chexnet refuses it on this ISA" >&2
		return 0
	fi
	t=$($py "$here/torch_step.py" "$1" "$steps" | awk '{print $3, $4}')
	m=$(chex "$1" "--memory-efficient")
	echo "$1 $t $c $m"
}

table() { # label
	echo "== $1: PyTorch's oneDNN dispatches $(torch_dispatch)"
	# fields: precision, torch img/s rss, chexnet img/s rss isa, memory-efficient img/s rss isa
	for p in fp32 bf16; do row "$p"; done | awk '
	{ printf "%-18s %-5s torch %6.2f img/s %5d MiB | chexnet %6.2f img/s (%.2fx) %5d MiB (%.2fx) | memory-efficient %6.2f img/s (%.2fx) %5d MiB (%.2fx)\n",
		$6, $1, $2, $3, $4, $4 / $2, $5, $5 / $3, $7, $7 / $2, $8, $8 / $3 }'
}

# An ISA's rank: a cap runs when it is below the native ISA's.
rank() {
	case $1 in
	sse41 | SSE41) echo 1 ;; avx | AVX) echo 2 ;; avx2* | AVX2) echo 3 ;;
	avx512_core | AVX512_CORE) echo 4 ;; *) echo 5 ;;
	esac
}

for cap in ${CAPS:-}; do
	case $cap in AVX512_CORE | AVX2 | AVX | SSE41) ;;
	*) echo "hvd: vs_pytorch: CAPS: '$cap': not one of AVX512_CORE AVX2 AVX SSE41" >&2; exit 1 ;;
	esac
done
[ "${MAXBATCH:-0}" = only ] || {
table "native"
native=$("$build/chexnet" bench --backend cpu --batch 1 --size 32 --steps 1 --quiet 2>&1 |
	sed -n 's/.*(\([a-z0-9_]*\), [0-9]*-channel blocks).*/\1/p')
for cap in ${CAPS:-AVX512_CORE AVX2 AVX SSE41}; do
	case $cap in
	AVX512_CORE) aten=avx512 ;; AVX2) aten=avx2 ;; *) aten=default ;;
	esac
	if [ "$(rank "$cap")" -ge "$(rank "$native")" ]; then
		echo "== capped to $cap: not below this CPU's $native"
		continue
	fi
	ONEDNN_MAX_CPU_ISA=$cap DNNL_MAX_CPU_ISA=$cap ATEN_CPU_CAPABILITY=$aten
	export ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA ATEN_CPU_CAPABILITY
	table "capped to $cap"
done
}

# peak RSS MiB of one fp32 step at batch $2 of: torch, chexnet, chexnet-me
rss_at() {
	case $1 in
	torch) $py "$here/torch_step.py" fp32 1 "$2" | awk '{print $4}' ;;
	chexnet) "$build/chexnet" bench --backend cpu --batch "$2" --size 224 --threads 2 \
		--steps 1 --quiet 2>&1 | sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' ;;
	chexnet-me) "$build/chexnet" bench --backend cpu --batch "$2" --size 224 --threads 2 \
		--steps 1 --quiet --memory-efficient 2>&1 | sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' ;;
	esac
}

if [ "${MAXBATCH:-0}" != 0 ]; then
	unset ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA ATEN_CPU_CAPABILITY
	limit=$(awk '/^MemAvailable/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
	echo "== largest fp32 batch in $limit MiB (90 % of the memory available now)"
	for p in torch chexnet chexnet-me; do
		r8=$(rss_at $p 8) r16=$(rss_at $p 16)
		b=$(awk -v a="$r8" -v c="$r16" -v l="$limit" 'BEGIN { per = (c - a) / 8;
			printf "%d", (l - (c - 16 * per)) / per }')
		echo "$p: $r8 MiB at batch 8, $r16 MiB at 16 -> batch $b: peak $(rss_at $p "$b") MiB"
	done
fi

if [ "${PROFILE:-0}" = 1 ]; then
	cc -O2 -I"$top/trainer" -o "$build/cpu_profile" "$here/cpu_profile.c" \
		"$build/libchexnet.a" -ldnnl -lgomp -lspng -lturbojpeg -lz -lcjson -lm
	for p in fp32 bf16; do "$build/cpu_profile" "$p" 16 224 0 | head -20; done
fi
