#!/bin/bash
# tests/gpu/reference_run.sh BACKEND [BUILD] - the short training run that
# compares a backend with the CPU (issue 46, point 3): generated data
# (chexnet synth, seed 1), packed at 73 px, DenseNet-121 trained at 64 px,
# batch 16, seed SEED (default 1), fp32, EPOCHS (default 3) epochs, then
# `chexnet eval`
# of OUT/last on the test split with the 95% patient-bootstrap interval
# (1000 resamples). The same command on the cpu and the gpu backend: the
# GPU run passes when its mean test AUROC lies inside the CPU run's
# interval (trainer/backend/gpu/README.md keeps the CPU run's numbers).
# Prints the eval table and last one line:
#   reference: BACKEND: mean test AUROC A [LO,HI] (...)
# Work in REF_WORK (default: a temp dir, removed); BUILD default build/.
# Exit status non-zero when a step fails. A check, not a test: it proves
# nothing alone.
set -u -o pipefail
backend=${1:?usage: tests/gpu/reference_run.sh cpu|gpu|ref [BUILD]}
build=$(cd "${2:-$(dirname "$0")/../../build}" && pwd) || exit 1
epochs=${EPOCHS:-3}
seed=${SEED:-1}
run=run-$backend
[ "$seed" = 1 ] || run=run-$backend-seed$seed
chexnet=$build/chexnet
[ -x "$chexnet" ] || { echo "reference_run.sh: '$chexnet': not built" >&2; exit 1; }
work=${REF_WORK:-$(mktemp -d /tmp/hvd-ref.XXXXXX)}
[ -z "${REF_WORK:-}" ] && trap 'rm -rf "$work"' EXIT
mkdir -p "$work" || exit 1
set -e
[ -d "$work/shards" ] || {
	"$chexnet" synth --out "$work/nih" --count 1200 --size 128 --seed 1 > "$work/synth.log" 2>&1
	"$chexnet" pack --data "$work/nih" --out "$work/shards" --size 73 > "$work/pack.log" 2>&1
}
rm -rf "${work:?}/$run"
"$chexnet" train --data "$work/shards" --backend "$backend" --precision fp32 --size 64 --batch 16 \
	--epochs "$epochs" --seed "$seed" --out "$work/$run" --quiet > "$work/train-$run.log" 2>&1 ||
	{ tail -5 "$work/train-$run.log"; exit 1; }
"$chexnet" eval --data "$work/shards" --checkpoint "$work/$run/last" --backend "$backend" \
	--split test --bootstrap 1000 --seed 1 2>&1 | tee "$work/eval-$run.log"
set +e
mean=$(awk '$1 == "mean" { print $2, $3; exit }' "$work/eval-$run.log")
echo "reference: $backend: seed $seed: mean test AUROC ${mean:-(no mean line)} (last/ after $epochs epochs, 95% patient bootstrap)"
[ -n "$mean" ]
