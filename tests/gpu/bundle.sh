#!/bin/bash
# tests/gpu/bundle.sh - an offline bundle for a GPU node that has CUDA, a
# driver and (ideally) cuDNN/NCCL but no package registry: the GPU build
# made here, the Debian runtime libraries it loads (not -dev) as .deb
# files, and a manifest. tests/gpu/run.sh --prefix DIR uses it there.
#
#   tests/gpu/bundle.sh DIR            build B=build-bundle (CUDA_ARCHS=90,
#                                      WITH_DNNL=0), copy, download, check size
#   tests/gpu/bundle.sh --emu DIR      the same from the emulated device's build
#                                      (make GPU_EMU=1 into build-bundle-emu)
#   tests/gpu/bundle.sh --packages B   only print the Debian packages B's
#                                      programs load (no build, no download)
#
# DIR gets build/ (the programs of B, debug info stripped: no obj/, no
# fuzzers, no static libraries), debs/ (apt-get download of every package
# owning a library that ldd resolves for them) and MANIFEST (commit, make
# arguments, packages with versions, the libraries expected from the
# node, sizes). Left out on purpose, found on the node by run.sh: glibc,
# libgcc and libstdc++ (built on Debian 12: the node's must be as new),
# and everything CUDA (libcudart, cuDNN, cuBLAS, NCCL, the driver's
# libcuda and NVML). Not bundled: Slurm and munge (run.sh runs the Slurm
# cases only where they are installed).
# Exit status non-zero, with one line, when the build, a library's
# package or a download fails, or when DIR plus the repository's tracked
# files exceed BUNDLE_MAX_MIB (default 64: the device tool carries 64 MiB).
set -u -o pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
max_mib=${BUNDLE_MAX_MIB:-64}
fail() { echo "bundle.sh: $*" >&2; exit 1; }

# Programs of a build that the tests and run.sh start.
programs() { # BUILD
	find "$1" -maxdepth 1 -type f -perm -u+x ! -name 'fuzz-*' | sort
}

# Libraries that stay the node's: the C/C++ base and everything CUDA.
node_lib() { # SONAME PATH
	case "$1" in
	libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) return 0 ;;
	libgcc_s.so.* | libstdc++.so.*) return 0 ;;
	libcuda.so.* | libcudart.so.* | libcudnn*.so.* | libcublas*.so.* | libnccl.so.* | libnvidia-*) return 0 ;;
	esac
	case "$2" in /usr/local/cuda*) return 0 ;; esac
	return 1
}

# "package soname" for every library ldd resolves for the build's
# programs, the node's own left out. An unresolved one is an error.
# Owners come from one dpkg -S over every name a library may be known
# to dpkg by (as ldd says, resolved, with and without /usr): a dpkg -S
# reads dpkg's whole file list, one per library took 15 CPU-seconds.
packages() { # BUILD
	local so path pkg form libs line
	local -a forms=()
	local -A owner=()
	# shellcheck disable=SC2046
	libs=$(ldd $(programs "$1") 2> /dev/null | awk '$2 == "=>" { print $1, $3 }' | sort -u)
	while read -r so path; do
		case "$path" in "" | not) continue ;; esac
		forms+=("$path" "$(readlink -f "$path")" "/usr${path#/usr}" "${path#/usr}")
	done <<< "$libs"
	if [ ${#forms[@]} -gt 0 ]; then
		while IFS= read -r line; do
			case "$line" in *": /"*) ;; *) continue ;; esac
			form="/${line#*: /}"
			[ -n "${owner[$form]:-}" ] || owner[$form]=${line%%:*}
		done < <(dpkg -S "${forms[@]}" 2> /dev/null)
	fi
	while read -r so path; do
		[ -n "$so" ] || continue
		if [ "$path" = not ]; then
			echo "MISSING $so"
			continue
		fi
		node_lib "$so" "$path" && continue
		pkg=
		for form in "$path" "$(readlink -f "$path")" "/usr${path#/usr}" "${path#/usr}"; do
			[ -n "$form" ] && pkg=${owner[$form]:-} && [ -n "$pkg" ] && break
		done
		echo "${pkg:-UNOWNED} $so $path"
	done <<< "$libs" | awk '
		$1 == "MISSING" { print "bundle.sh: \x27" $2 "\x27: not found by ldd" > "/dev/stderr"; bad = 1; next }
		$1 == "UNOWNED" { print "bundle.sh: \x27" $3 "\x27: no Debian package owns it" > "/dev/stderr"; bad = 1; next }
		{ print $1, $2 }
		END { exit bad }'
}

emu=0
if [ "${1:-}" = --packages ]; then
	[ -d "${2:-}" ] || fail "--packages: '${2:-}': not a build directory"
	packages "$2" | awk '{ print $1 }' | sort -u
	exit "${PIPESTATUS[0]}"
fi
[ "${1:-}" = --emu ] && { emu=1; shift; }
[ $# = 1 ] || fail "usage: tests/gpu/bundle.sh [--emu] DIR | --packages BUILD"
dir=$1

archs=${CUDA_ARCHS:-90}
if [ "$emu" = 1 ]; then
	build='build-bundle-emu'
	args=(B="$build" GPU_EMU=1 WITH_DNNL=0 WITH_CUDA=1 WITH_CUDNN=1 WITH_CUBLAS=1 WITH_NCCL=1)
else
	build='build-bundle'
	args=(B="$build" CUDA_ARCHS="$archs" WITH_DNNL=0 WITH_CUDA=1 WITH_CUDNN=1 WITH_CUBLAS=1 WITH_NCCL=1)
fi
echo "== build: make ${args[*]}"
make -C "$src" --no-print-directory -j"${BUNDLE_JOBS:-2}" "${args[@]}" all > "$src/$build.log" 2>&1 ||
	{ tail -20 "$src/$build.log"; fail "build failed (log: $build.log)"; }

rm -rf "$dir" && mkdir -p "$dir/build" "$dir/debs" || fail "'$dir': cannot create"
dir=$(cd "$dir" && pwd)
for f in $(programs "$src/$build"); do
	cp "$f" "$dir/build/" && strip --strip-debug "$dir/build/${f##*/}" ||
		fail "'$f': cannot copy and strip"
done
cp "$src/$build/config.mk" "$dir/build/"

echo "== Debian runtime libraries (ldd; dpkg -S)"
pkgs=$(packages "$dir/build" | awk '{ print $1 }' | sort -u) || exit 1
[ -n "$pkgs" ] || fail "no library packages found: ldd of '$dir/build' gave nothing"
(cd "$dir/debs" && apt-get download -q $pkgs > "$dir/debs.log" 2>&1) ||
	{ tail -5 "$dir/debs.log"; fail "apt-get download failed (log: $dir/debs.log)"; }
rm -f "$dir/debs.log"

tree_kib=$(cd "$src" && git ls-files -z | du -c -k --files0-from=- | tail -1 | cut -f1)
dir_kib=$(du -s -k "$dir" | cut -f1)
{
	echo "# hvd GPU bundle: tests/gpu/bundle.sh; used by tests/gpu/run.sh --prefix DIR"
	echo "commit $(git -C "$src" rev-parse HEAD)$(git -C "$src" diff --quiet HEAD || echo ' (with local changes)')"
	echo "made $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
	echo "make ${args[*]}"
	echo "nvcc $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version 2> /dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
	echo "from the node: glibc >= $(ldd --version | head -1 | awk '{ print $NF }'), libstdc++, and:"
	ldd "$dir/build/chexnet" "$dir/build/hvdtest" | awk '$1 ~ /^lib(cuda|cudart|cudnn|cublas|nccl)/ { print "  " $1 }' | sort -u
	echo "packages:"
	for d in "$dir"/debs/*.deb; do
		echo "  $(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version) $(du -k "$d" | cut -f1) KiB"
	done
	echo "programs: $(ls "$dir/build" | tr '\n' ' ')"
	echo "size: bundle $((dir_kib / 1024)) MiB, tracked tree $((tree_kib / 1024)) MiB"
} > "$dir/MANIFEST"
cat "$dir/MANIFEST"
[ $(((dir_kib + tree_kib) / 1024)) -le "$max_mib" ] ||
	fail "'$dir' ($((dir_kib / 1024)) MiB) and the tracked tree ($((tree_kib / 1024)) MiB) exceed $max_mib MiB"
echo "bundle.sh: '$dir': $(echo $pkgs | wc -w) packages, $((dir_kib / 1024)) MiB"
