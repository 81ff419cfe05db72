#!/usr/bin/env bash
# bench/onednn_versions/run.sh [ROUNDS] - what a newer oneDNN changes in
# the convolutions of a DenseNet-121 training step (conv_sweep.c: 224 px,
# batch 16, every conv forward, backward data, backward weights) on this
# CPU: Debian 12's oneDNN 2.6.3 (libdnnl-dev) against oneDNN 3.2 from
# PyPI (onednn-cpu-gomp / onednn-devel-cpu-gomp 2023.2.0, GNU OpenMP as
# Debian's; mk/onednn3.sh into .deps beside this script, nothing else
# touched), built from the same source, alternated, on 2 threads, fp32 and
# bf16 where the CPU has it, native and under each lower ONEDNN_MAX_CPU_ISA
# cap the CPU allows. Prints the CPU, one row per setting with the median
# milliseconds of each version and their ratio (2.6.3 / 3.2: above 1 =
# 3.2 faster), and that ratio for backward data alone.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-3}
deps=$here/.deps
threads=${THREADS:-2}
die() { echo "bench: onednn_versions: $*" >&2; exit 1; }

"$here/../../mk/onednn3.sh" "$deps/onednn-3.2" || die "oneDNN 3.2 from PyPI: failed"
[ -e /usr/include/oneapi/dnnl/dnnl.h ] || die "Debian's libdnnl-dev is not installed (make deps)"
cc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$deps/sweep-2" "$here/conv_sweep.c" -ldnnl
cc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$deps/onednn-3.2/include" -o "$deps/sweep-3" \
	"$here/conv_sweep.c" -L"$deps/onednn-3.2/lib" -Wl,-rpath,"$deps/onednn-3.2/lib" -l:libdnnl.so.3

flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //') model $(grep -m1 '^model\s' /proc/cpuinfo | sed 's/.*: //'), $threads threads; load $(cut -d' ' -f1-3 /proc/loadavg)"
settings="f32:"
has avx512f && settings="$settings f32:AVX2"
has avx2 && settings="$settings f32:SSE41"
has avx512_bf16 || has amx_bf16 && settings="$settings bf16:"
has avx512f && settings="$settings bf16:AVX512_CORE"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-6s %-12s %-18s %10s %10s %7s %16s\n' dtype cap isa "2.6.3 ms" "3.2 ms" ratio \
	"bwd_data ratio"
for s in $settings; do
	dt=${s%%:*} cap=${s#*:}
	: > "$deps/t2"; : > "$deps/t3"; : > "$deps/d2"; : > "$deps/d3"
	for _ in $(seq "$rounds"); do
		for v in 2 3; do
			env ${cap:+ONEDNN_MAX_CPU_ISA=$cap} OMP_NUM_THREADS=$threads OMP_PROC_BIND=close \
				"$deps/sweep-$v" "$dt" 1 > "$deps/out" || die "sweep-$v $dt cap '${cap:-none}' failed"
			awk '{ print $14 }' "$deps/out" >> "$deps/t$v"
			awk '{ print $10 }' "$deps/out" >> "$deps/d$v"
			isa=$(awk '{ print $4 }' "$deps/out")
		done
	done
	m2=$(median < "$deps/t2") m3=$(median < "$deps/t3")
	printf '%-6s %-12s %-18s %10s %10s %7s %16s\n' "$dt" "${cap:-none}" "$isa" "$m2" "$m3" \
		"$(ratio "$m2" "$m3")" "$(ratio "$(median < "$deps/d2")" "$(median < "$deps/d3")")"
done
