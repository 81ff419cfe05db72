#!/usr/bin/env bash
# deps.sh build|test - install the Debian packages the build needs (build)
# or those only the tests and the demo need (test: the private Slurm
# cluster's daemons and clients, munge, clang for the fuzz targets,
# groff-base for the man pages, python3-torch/torchvision for the test
# that loads a checkpoint in PyTorch, python3-onnx for the one that
# exports it (contrib/chexnet-onnx), python3-venv for tests/pyenv.sh,
# dpkg-dev, lintian and rpm for `make deb` and group packages, ccache for
# the suite's own builds of the tree: mk/with-ccache.sh).
# With SLURM_HOME set, build skips libslurm-dev (the headers come from
# there). As root on Debian/Ubuntu: apt-get installs whatever is missing
# (quick and silent when nothing is). As another user: prints the exact
# apt-get line and fails. Elsewhere: says what to install and fails only
# if asked to. Package state is read with dpkg-query here only; the build
# itself detects features by compiling (mk/detect.sh).
set -u
slurm_dev=libslurm-dev
[ -n "${SLURM_HOME:-}" ] && slurm_dev=
case ${1:-} in
build)
	pkgs="pkg-config gcc g++ make libc6-dev $slurm_dev
libpmix-dev nettle-dev libhwloc-dev libopenmpi-dev
libdnnl-dev libspng-dev libturbojpeg0-dev libcjson-dev zlib1g-dev libcairo2-dev libgdcm-dev
libyaml-dev" ;;
test)
	pkgs="slurm-wlm slurmctld slurmd slurm-client munge hwloc openmpi-bin
python3-yaml python3-venv iproute2 procps psmisc util-linux clang groff-base
python3-torch python3-torchvision python3-onnx dpkg-dev lintian rpm ccache" ;;
*)
	echo "hvd: deps: '${1:-}': use build or test" >&2
	exit 2 ;;
esac

if ! command -v dpkg-query > /dev/null || ! command -v apt-get > /dev/null; then
	echo "hvd: deps: not a Debian/Ubuntu system: install the equivalents of:" $pkgs >&2
	exit 0
fi
missing=
for p in $pkgs; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "hvd: deps: missing Debian packages:$missing: run as root: $line" >&2
	exit 1
fi
echo "hvd: deps: installing:$missing"
# Keep package scripts from starting the machine's own munge/slurm daemons.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && made_policy=1
fi
trap '[ "$made_policy" = 1 ] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends $missing > /tmp/hvd-deps.log 2>&1; then
	apt-get update -q > /dev/null 2>&1
	if ! apt-get install -y -q --no-install-recommends $missing > /tmp/hvd-deps.log 2>&1; then
		tail -20 /tmp/hvd-deps.log >&2
		echo "hvd: deps: '$line': failed (log in /tmp/hvd-deps.log)" >&2
		exit 1
	fi
fi
# New packages change what the build finds: drop cached detection.
rm -f build/config.mk build-san/config.mk
echo "hvd: deps: installed:$missing"
