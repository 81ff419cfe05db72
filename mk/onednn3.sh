#!/usr/bin/env bash
# onednn3.sh DEST - oneDNN 3.2 from PyPI as an installation prefix at
# DEST (DEST/include, DEST/lib, and oneDNN's LICENSE and
# THIRD-PARTY-PROGRAMS in DEST/share/doc/onednn, which `make deb ONEDNN=3`
# ships with the library), for `make DNNL_HOME=DEST` where the system has
# no oneDNN 3.x: the onednn-cpu-gomp and onednn-devel-cpu-gomp
# 2023.2.0 wheels (oneDNN 3.2.0, GNU OpenMP as Debian's, glibc 2.17 and
# up), downloaded with pip from a virtual environment in DEST/.venv. The
# system's Python and oneDNN are not touched. Idempotent (DEST/.done);
# concurrent calls wait on a lock. What it does not do: build (make), or
# install anything system-wide.
set -eu
dest=${1:?usage: onednn3.sh DEST}
version=2023.2.0
# the prefix's layout: a prefix marked with another one is made again
mark="$version 2"
die() { echo "hvd: onednn3: $*" >&2; exit 1; }
[ "$(cat "$dest/.done" 2>/dev/null)" = "$mark" ] && exit 0
mkdir -p "$dest"
exec 9> "$dest/.lock"
flock 9
[ "$(cat "$dest/.done" 2>/dev/null)" = "$mark" ] && exit 0
rm -rf "$dest/.venv" "$dest/wheels" "$dest/unpacked" "$dest/include" "$dest/lib" "$dest/share"
python3 -m venv "$dest/.venv" || die "'python3 -m venv $dest/.venv': failed (python3-venv)"
"$dest/.venv/bin/pip" download -q --no-deps --disable-pip-version-check -d "$dest/wheels" \
	"onednn-cpu-gomp==$version" "onednn-devel-cpu-gomp==$version" ||
	die "'pip download onednn-cpu-gomp==$version onednn-devel-cpu-gomp==$version': failed"
for w in "$dest"/wheels/*.whl; do
	"$dest/.venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
		"$w" "$dest/unpacked" || die "'$w': not a wheel"
done
# A wheel holds no links: one library file, and links for its two names.
data=$(echo "$dest"/unpacked/onednn_cpu_gomp-*.data/data)
mkdir -p "$dest/lib" "$dest/share/doc"
cp -a "$data"/lib/libdnnl.so.3.? "$dest/lib/" &&
	cp -a "$data/share/doc/onednn" "$dest/share/doc/onednn" &&
	[ -f "$dest/share/doc/onednn/LICENSE" ] &&
	cp -a "$dest"/unpacked/onednn_devel_cpu_gomp-*.data/data/include "$dest/include" ||
	die "'$dest/unpacked': the wheels hold no lib/libdnnl.so.3.N, share/doc/onednn/LICENSE or include/"
real=$(cd "$dest/lib" && echo libdnnl.so.3.?)
ln -s "$real" "$dest/lib/libdnnl.so.3" && ln -s libdnnl.so.3 "$dest/lib/libdnnl.so" ||
	die "'$dest/lib': cannot link libdnnl.so.3 and libdnnl.so to '$real'"
rm -rf "$dest/wheels" "$dest/unpacked" "$dest/.venv"
echo "$mark" > "$dest/.done"
