#!/bin/bash
# tests/gpu/prefix_env.sh DIR - the environment that runs a bundle of
# tests/gpu/bundle.sh on this node, as `export` lines for eval: DIR's
# .debs unpacked with dpkg -x (or python3) into HVD_GPU_ROOT (default
# /tmp/hvd-gpu-root; kept while its MANIFEST is DIR's, so the tests and
# the bench of one lease unpack once), every library folder there on
# LD_LIBRARY_PATH, then each library the programs still miss (CUDA
# runtime, cuDNN, NCCL, and cuBLAS, which chexnet opens) found on the
# node: ldconfig -p, /usr/local/cuda, or pip's nvidia-* packages of
# python3, one line on stderr each saying where.
#   eval "$(tests/gpu/prefix_env.sh gpu-bundle)" || exit 1
# Exit status non-zero, with one line, when DIR is no bundle, dpkg is
# missing or a library is found nowhere. Changes nothing but HVD_GPU_ROOT.
set -u -o pipefail
fail() { echo "prefix_env.sh: $*" >&2; exit 1; }

dir=${1:?usage: tests/gpu/prefix_env.sh DIR}
[ -f "$dir/MANIFEST" ] && [ -x "$dir/build/hvdtest" ] ||
	fail "'$dir': no MANIFEST and build/hvdtest: not a bundle (tests/gpu/bundle.sh DIR)"
dir=$(cd "$dir" && pwd)
root=${HVD_GPU_ROOT:-/tmp/hvd-gpu-root}
# unpack DEB ROOT: dpkg -x, or where a node has no dpkg, python3 reads the
# ar archive's data.tar.* member (the same files, owners left out).
unpack() {
	if command -v dpkg > /dev/null; then
		dpkg -x "$1" "$2"
	else
		python3 -c 'import io, sys, tarfile
raw = open(sys.argv[1], "rb").read()
assert raw[:8] == b"!<arch>\n", "not an ar archive"
at = 8
while at + 60 <= len(raw):
    name, size = raw[at:at + 16].decode().strip().rstrip("/"), int(raw[at + 48:at + 58])
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(raw[at + 60:at + 60 + size])).extractall(sys.argv[2], filter="tar")
        sys.exit(0)
    at += 60 + size + (size & 1)
sys.exit("no data.tar member")' "$1" "$2"
	fi
}
if ! cmp -s "$dir/MANIFEST" "$root/MANIFEST"; then
	command -v dpkg > /dev/null || command -v python3 > /dev/null ||
		fail "neither dpkg nor python3 on PATH: cannot unpack '$dir/debs'"
	rm -rf "$root" && mkdir -p "$root" || fail "'$root': cannot create"
	for d in "$dir"/debs/*.deb; do
		unpack "$d" "$root" || fail "unpacking '$d' failed"
	done
	cp "$dir/MANIFEST" "$root/MANIFEST"
fi
libs=$(find "$root" -name '*.so*' \( -type f -o -type l \) -printf '%h\n' | sort -u | tr '\n' :)
export LD_LIBRARY_PATH="${libs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

py=$(command -v python3)
sites=$([ -n "$py" ] && "$py" -c 'import site
print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2> /dev/null)
# cuBLAS is opened with dlopen on first use (gpu_cublas.c), so ldd does
# not list it: its soname, kept in chexnet, is looked for when ldconfig
# does not know it.
opened=$(strings -a "$dir/build/chexnet" | grep -E '^libcublas\.so\.[0-9]+$' | sort -u)
wanted=$(ldd "$dir"/build/chexnet "$dir"/build/hvdtest | awk '$3 == "not" { print $1 }'
	for so in $opened; do ldconfig -p | grep -q "^[[:space:]]*$so " || echo "$so"; done)
for so in $(sort -u <<< "$wanted"); do
	at=$(ldconfig -p | awk -v s="$so" '$1 == s { print $NF; exit }')
	for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
		[ -z "$at" ] && [ -e "$d/$so" ] && at=$d/$so
	done
	for s in $sites; do
		[ -z "$at" ] && [ -d "$s/nvidia" ] && at=$(find "$s/nvidia" -maxdepth 4 -name "$so" | head -1)
	done
	[ -n "$at" ] || fail "'$so': not found on this node (ldconfig -p, /usr/local/cuda, pip's nvidia-* packages)"
	echo "prefix_env.sh: from the node: $so: $at" >&2
	LD_LIBRARY_PATH="$LD_LIBRARY_PATH:${at%/*}"
done
missing=$(ldd "$dir"/build/chexnet "$dir"/build/hvdtest | awk '$3 == "not" { print $1 }' | sort -u | tr '\n' ' ')
[ -z "$missing" ] || fail "still missing: $missing"
echo "prefix_env.sh: chexnet loads $(ldd "$dir/build/chexnet" | grep -c "=> $root") libraries from the bundle, $(ldd "$dir/build/chexnet" | grep '=> /' | grep -vc "=> $root") from the node" >&2
printf 'export LD_LIBRARY_PATH=%q\n' "$LD_LIBRARY_PATH"
