#!/bin/bash
# tests/gpu/run.sh - for a GPU node: probe the machine (GPU, driver, CUDA,
# where cuDNN/NCCL/cuBLAS are), run the gpu test groups (gpu-unit,
# gpu-audit, gpu-train and gpu-emu on the CPU; gpu-ops, gpu-layers, gpu-graph
# against the ref backend and trainer-loss's gpu cases on the GPU; as
# root with the Slurm packages, slurm-e2e-gpu on the test's own cluster,
# whose 2-GPU cases skip on a 1-GPU node), a one-rank NCCL training job
# (HVD_BACKEND=nccl: comm_nccl.c's init, broadcast, allreduce and
# allgather on the device), a pass/fail/skip table, then one `chexnet
# bench --backend gpu` images/s line per precision.
#
#   tests/gpu/run.sh                    build (default CUDA_ARCHS) into build/, run
#   tests/gpu/run.sh --prefix DIR       no build: DIR from tests/gpu/bundle.sh in the
#                                       environment of tests/gpu/prefix_env.sh DIR
#   tests/gpu/run.sh --build B          no build: B as it is
#   --list                              print the selected cases and stop
#   --only 'GROUP [SUBSTRING...]'       select this instead of the default (repeatable)
#   --no-bench                          no bench lines
#   RUN_LOGS=DIR (default: the build dir) gets run.log, every group's output
#   BENCH_STEPS=30 BENCH_BATCH=16 BENCH_SIZE=224; CUDA_ARCHS, CUDA_HOME for the build
#
# A selection is a group of `hvdtest -l` and optional substrings of its
# case names, run as `hvdtest -G GROUP SUBSTRING...`; one that matches no
# case is an error before anything runs. Exit status
# non-zero when the build, a selection, a library or any test fails, or
# when gpu-layers skipped (no usable device: nothing was shown).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
fail() { echo "run.sh: $*" >&2; exit 1; }

prefix='' build='' list=0 bench=1 only=()
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=${2:?--prefix DIR}; shift ;;
	--build) build=${2:?--build DIR}; shift ;;
	--list) list=1 ;;
	--only) only+=("${2:?--only 'GROUP [SUBSTRING...]'}"); shift ;;
	--no-bench) bench=0 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
	*) fail "'$1': unknown argument (--help)" ;;
	esac
	shift
done
[ -n "$prefix" ] && [ -n "$build" ] && fail "--prefix and --build: give one"
if [ -n "$prefix" ]; then
	[ -x "$prefix/build/hvdtest" ] || fail "'$prefix': no build/hvdtest: not a bundle (tests/gpu/bundle.sh DIR)"
	prefix=$(cd "$prefix" && pwd)
	build=$prefix/build
fi

# The default selection; --only replaces it.
if [ ${#only[@]} -gt 0 ]; then
	runs=("${only[@]}")
else
	runs=(gpu-unit gpu-audit gpu-train gpu-emu gpu-ops gpu-layers gpu-graph "trainer-loss gpu_")
	if [ "$(id -u)" = 0 ] && command -v slurmctld > /dev/null; then
		runs+=(slurm-e2e-gpu)
	else
		slurm_note="slurm-e2e-gpu not run: it needs root and the Slurm packages (make test-deps), absent here"
	fi
fi

# check_selection BUILD: every selection is a group of hvdtest and
# matches a case (hvdtest -l -G GROUP SUBSTRING... lists what it runs).
check_selection() {
	local run group cases listing
	for run in "${runs[@]}"; do
		read -r group cases <<< "$run"
		# shellcheck disable=SC2086
		listing=$(eval "${env_lines:-}"; "$1/hvdtest" -l -G "$group" $cases 2>&1) ||
			fail "selection '$run': ${listing#hvdtest: }"
		if [ "$list" = 1 ]; then
			echo "$run: $(wc -l <<< "$listing") cases"
			sed 's/^/  /' <<< "$listing"
		fi
	done
}

if [ -z "$build" ]; then
	build=build
	if [ "$list" = 0 ]; then
		make_args=(WITH_CUDA=1 WITH_CUDNN=1 WITH_CUBLAS=1)
		[ -n "${CUDA_ARCHS:-}" ] && make_args+=("CUDA_ARCHS=$CUDA_ARCHS")
		[ -n "${CUDA_HOME:-}" ] && make_args+=("CUDA_HOME=$CUDA_HOME")
		mkdir -p "$build"
		echo "== build (${make_args[*]})"
		make -j"$(nproc)" "${make_args[@]}" > "$build/gpu-build.log" 2>&1 ||
			{ tail -30 "$build/gpu-build.log"; fail "build failed (log: $build/gpu-build.log)"; }
	fi
fi
[ -x "$build/hvdtest" ] || fail "'$build/hvdtest': not built"
build=$(cd "$build" && pwd)
# The bundle's libraries, then the node's for what they leave out: every
# program of the bundle runs in this environment, hvdtest -l too.
env_lines=''
if [ -n "$prefix" ]; then
	env_lines=$(tests/gpu/prefix_env.sh "$prefix" 2> "$prefix/prefix_env.log") ||
		{ cat "$prefix/prefix_env.log"; exit 1; }
fi
check_selection "$build"
[ "$list" = 1 ] && exit 0

logs=${RUN_LOGS:-$build}
mkdir -p "$logs" || fail "RUN_LOGS: '$logs': cannot create"
log=$logs/run.log
: > "$log"
exec > >(tee -a "$log") 2>&1

# The machine, as it is: nothing here fails the run.
echo "== probe"
echo "host: $(uname -srm); $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME"); $(ldd --version 2> /dev/null | head -1)"
if command -v nvidia-smi > /dev/null; then
	nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv,noheader
	nvidia-smi | sed -n 's/.*\(CUDA Version: *[0-9.]*\).*/driver: \1/p'
else
	echo "nvidia-smi: not on PATH"
fi
nvcc_bin=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
echo "nvcc: $("$nvcc_bin" --version 2> /dev/null | tail -2 | head -1 || echo none)"
echo "CUDA dirs: $(ls -d /usr/local/cuda* 2> /dev/null | tr '\n' ' ')"
echo "ldconfig -p:"
ldconfig -p 2> /dev/null | grep -E 'lib(cuda|cudart|cudnn|cublas|cublasLt|nccl|nvidia-ml)\.so' | sed 's/^/ /'
py=$(command -v python3)
if [ -n "$py" ]; then
	echo "pip ($py):"
	"$py" -m pip show nvidia-cudnn-cu13 nvidia-nccl-cu13 nvidia-cublas nvidia-cuda-runtime \
		nvidia-cudnn-cu12 nvidia-nccl-cu12 2> /dev/null | grep -E '^(Name|Version|Location):' | sed 's/^/ /'
	"$py" -c 'import torch; print(" torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
	  torch.backends.cudnn.version(), "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else "-")' \
		2> /dev/null || echo " torch: not importable"
fi

if [ -n "$prefix" ]; then
	echo "== libraries"
	cat "$prefix/prefix_env.log"
	eval "$env_lines"
	ldd "$build/chexnet" | awk '$1 ~ /^lib(cudart|cudnn|cublas|cublasLt|nccl)\./ { print " " $1, $3 }' |
		while read -r so path; do echo " $so => $path ($(readlink -f "$path"))"; done
fi

status=0
echo
printf '%-20s %7s %7s %8s\n' group passed failed skipped
for run in "${runs[@]}"; do
	read -r group cases <<< "$run"
	# shellcheck disable=SC2086
	out=$(tests/check.sh "$build" -G "$group" $cases 2>&1)
	rc=$?
	{ echo "==== $run (exit $rc)"; echo "$out"; } >> "$log.groups"
	passed=$(grep -c '^ok ' <<< "$out")
	failed=$(grep -c '^FAIL ' <<< "$out")
	skipped=$(grep -c '^skip ' <<< "$out")
	printf '%-20s %7d %7d %8d\n' "$run" "$passed" "$failed" "$skipped"
	[ "$rc" -ne 0 ] && { status=1; grep -E '^FAIL |^hvdtest:' <<< "$out" | head -20; }
	if [ "$group" = gpu-layers ] && [ "$skipped" -gt 0 ]; then
		grep '^skip ' <<< "$out" | head -3
		status=1
	fi
	[ "$group" = slurm-e2e-gpu ] && grep '^skip ' <<< "$out" | head -5
done
[ -n "${slurm_note:-}" ] && echo "($slurm_note)"
cat "$log.groups" >> "$log" && rm -f "$log.groups"

# comm_nccl.c on this node's one GPU: a one-rank NCCL job.
echo
work=$(mktemp -d /tmp/hvd-nccl1.XXXXXX)
out=$(cd "$work" && HVD_BACKEND=nccl "$build/chexnet" train --synthetic --synthetic-images 16 \
	--backend gpu --size 32 --batch 4 --steps 3 --optimizer sgd --verbose --out run 2>&1)
rc=$?
rm -rf "$work"
echo "$out" >> "$log"
if [ "$rc" = 0 ] && grep -q 'start-up: 1 rank, backend nccl' <<< "$out"; then
	echo "one-rank NCCL training: ok ($(grep -m1 'validation loss' <<< "$out"))"
else
	echo "one-rank NCCL training: FAIL (exit $rc): $(tail -3 <<< "$out" | tr '\n' ' ')"
	status=1
fi

if [ "$bench" = 1 ]; then
	echo
	for precision in fp32 fp16 bf16; do
		line=$("$build/chexnet" bench --backend gpu --precision "$precision" --batch "${BENCH_BATCH:-16}" \
			--size "${BENCH_SIZE:-224}" --steps "${BENCH_STEPS:-30}" --quiet 2>&1 | tee -a "$log" |
			grep -i 'images/s' | tail -1)
		echo "bench gpu $precision: ${line:-no images/s line (see $log)}"
		[ -z "$line" ] && status=1
	done
fi
echo "run.sh: $([ $status = 0 ] && echo passed || echo FAILED); log: $log"
exit $status
