#!/usr/bin/env bash
# bench/onednn_versions/step.sh [ROUNDS] - what oneDNN 3.2 changes in a
# whole training step: `chexnet bench --backend cpu` (DenseNet-121, 224
# px, batch 16, 8 steps, the CPUs in the affinity mask) from the main
# build on Debian's 2.6.3 (build/chexnet) and from the same tree built on
# PyPI's 3.2 (build/onednn3-build/chexnet: make check's group cpu-onednn3
# makes it), alternated ROUNDS times (default 2), fp32 and bf16 where the
# CPU has it, native, capped to AVX2 where the CPU has more and to SSE4.1
# (the lowest ISA both versions run: their jit:sse41 kernels). Prints
# the CPU, then per setting each round's ms/step of both and their ratio
# (2.6.3 / 3.2: above 1 = 3.2 faster).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-2}
old=$root/build/chexnet new=$root/build/onednn3-build/chexnet
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "bench: onednn_versions: '$b': not built (make check builds both)" >&2; exit 1; }
done
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
settings="fp32:"
has avx512_bf16 && settings="$settings bf16:"
has avx512f && settings="$settings fp32:AVX2"
settings="$settings fp32:SSE41"
ms() { env ${2:+ONEDNN_MAX_CPU_ISA=$2} "$3" bench --backend cpu --precision "$1" --steps 8 2>&1 |
	sed -n 's/^bench: .* \([0-9.]*\) ms\/step.*/\1/p'; }
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //') model $(grep -m1 '^model\s' /proc/cpuinfo | sed 's/.*: //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| dtype | cap | round | 2.6.3 ms | 3.2 ms | 2.6.3 / 3.2 |"
echo "|---|---|---|---|---|---|"
for s in $settings; do
	p=${s%%:*} cap=${s#*:}
	for r in $(seq "$rounds"); do
		a=$(ms "$p" "$cap" "$old") b=$(ms "$p" "$cap" "$new")
		[ -n "$a" ] && [ -n "$b" ] || { echo "bench: onednn_versions: $p ${cap:-native}: no ms/step" >&2; exit 1; }
		echo "| $p | ${cap:-none} | $r | $a | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') |"
	done
done
