#!/usr/bin/env bash
# bench/loader/run.sh BUILD [COUNT [chexnet bench options]] - input pipeline throughput (bench, not a
# test): generates COUNT (default 2000) synthetic 1024x1024 X-ray-like PNGs
# (the real originals' size), then measures
#   chexnet pack (all allowed CPUs, 256x256 records),
#   the shard loader with THREADS threads (default "1 2") at 224 (random
#   crop + flip + batch 32),
#   direct mode (PNG decode + resize in the workers) with THREADS threads,
# and, when `chexnet bench` exists, the ratio loader (1 thread) / training.
# Everything runs under the shared build lock (one benchmark at a time).
set -eu
build=$(cd "${1:?usage: run.sh BUILD [COUNT]}" && pwd)
count=${2:-2000}
tool=$build/chexnet
[ -x "$tool" ] || tool=$build/chexnet-data
work=$(mktemp -d /tmp/hvd-bench-loader.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$tool" synth --out "$work/nih" --count "$count" --size 1024 --seed 1 > /dev/null
echo "cpus allowed: $(nproc)"
"$tool" pack --data "$work/nih" --out "$work/pack" --size 256 2> /dev/null
one=$("$build/bench-loader" "$work/pack" 1 32 224 200)
echo "$one"
for t in ${THREADS:-1 2}; do
	[ "$t" = 1 ] || "$build/bench-loader" "$work/pack" "$t" 32 224 200
done
for t in ${THREADS:-1 2}; do
	"$build/bench-loader" "$work/nih" "$t" 32 224 20
done
if "$tool" bench --help > /dev/null 2>&1; then
	train=$("$tool" bench --steps 3 --batch 8 "${@:3}" 2>&1 | grep '^bench:' || true)
	echo "$train"
	loader_rate=$(echo "$one" | sed -n 's/.*: \([0-9.]*\) images\/s$/\1/p')
	train_rate=$(echo "$train" | sed -n 's/.*: \([0-9.]*\) images\/s,.*/\1/p')
	if [ -n "$loader_rate" ] && [ -n "$train_rate" ]; then
		awk -v l="$loader_rate" -v t="$train_rate" \
			'BEGIN { printf "ratio loader (1 thread) / training: %.0fx (goal >= 10x)\n", l / t }'
	fi
fi
