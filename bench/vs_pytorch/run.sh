#!/bin/sh
# bench/vs_pytorch/run.sh - chexnet's cpu backend against PyTorch's best CPU
# configurations on the CheXNet training step (DenseNet-121/14, batch 16,
# 224, 2 threads), alternating the two so both see the same machine state.
# Installs Debian's python3-torch/python3-torchvision if missing (root).
# Prints images/s, ratios and peak RSS; with PROFILE=1 also the per-layer
# profile of each chexnet precision. Bench, not a test.
#   bench/vs_pytorch/run.sh [build-dir] [steps]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/build}
steps=${2:-5}
py=/usr/bin/python3

if ! $py -c 'import torch, torchvision' 2>/dev/null; then
	echo "vs_pytorch: installing python3-torch python3-torchvision (Debian)"
	apt-get install -y -q python3-torch python3-torchvision >/dev/null
fi
[ -x "$build/chexnet" ] || { echo "hvd: vs_pytorch: '$build/chexnet': not built (run make)" >&2; exit 1; }
isa=$(grep -o -m1 'amx_bf16' /proc/cpuinfo || echo "no AMX")
echo "machine: $(nproc) CPUs allowed, $isa; torch $($py -c 'import torch; print(torch.__version__)')"

chex() { # precision extra-flags -> "img/s rss"
	"$build/chexnet" bench --backend cpu --precision "$1" --batch 16 --size 224 \
		--threads 2 --steps "$steps" --quiet $2 2>&1 |
	sed -n 's/.*: \([0-9.]*\) images\/s.*peak RSS \([0-9]*\) MiB.*/\1 \2/p'
}

for p in fp32 bf16; do
	t=$($py "$here/torch_step.py" "$p" "$steps" | awk '{print $3, $4}')
	c=$(chex "$p" "")
	m=$(chex "$p" "--memory-efficient")
	echo "$p $t $c $m"
done | awk '
{ printf "%-5s torch %6.2f img/s %5d MiB | chexnet %6.2f img/s (%.2fx) %5d MiB (%.2fx) | memory-efficient %6.2f img/s (%.2fx) %5d MiB (%.2fx)\n",
	$1, $2, $3, $4, $4 / $2, $5, $5 / $3, $6, $6 / $2, $7, $7 / $3 }'

if [ "${PROFILE:-0}" = 1 ]; then
	cc -O2 -I"$top/trainer" -o "$build/cpu_profile" "$here/cpu_profile.c" \
		"$build/libchexnet.a" -ldnnl -lgomp -lspng -lturbojpeg -lz -lcjson -lm
	for p in fp32 bf16; do "$build/cpu_profile" "$p" 16 224 0 | head -20; done
fi
