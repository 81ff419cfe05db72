#!/usr/bin/env bash
# deb.sh STAGE OUT VERSION SLURM_VERSION MAINTAINER [ONEDNN_PREFIX] - build hvd's Debian
# packages with plain dpkg-deb from a `make install` into STAGE (pkg/pkg.mk
# stages it with prefix=/usr, libdir=/usr/lib/MULTIARCH). pkg/deb/files
# says which package ships which staged file; each package's
# DEBIAN/control comes from pkg/deb/*.control (one per package), Depends from
# dpkg-shlibdeps (@SHLIBS@) and, for the plugin, the Slurm range of
# SLURM_VERSION (the headers': >= X.Y, << X.Y+1, pkg/slurm-range.sh).
# Also done here, as dh would: ELF files stripped (shared objects mode
# 0644), man pages and changelog gzipped, copyright (LICENSE), md5sums,
# conffiles (every file under etc/; the plugstack line made optional), a
# shlibs file and the ldconfig trigger for a package holding a lib*.so.N.
# Writes OUT/PACKAGE_VERSION_ARCH.deb, one per control file; OUT is
# emptied first. With ONEDNN_PREFIX (make deb ONEDNN=3: mk/onednn3.sh's
# prefix) chexnet bundles that oneDNN: its lib/libdnnl.so.3 goes to
# /usr/lib/MULTIARCH/chexnet (a private folder: no shlibs, no ldconfig),
# which must be chexnet's run path ($ORIGIN-relative), its licence
# (Apache-2.0, named in chexnet's copyright) and third-party notices
# (chexnet's doc folder), and a paragraph naming
# it into the description (@ONEDNN@); without it that line goes and
# chexnet must have no run path. A staged file no package ships, a listed file not
# staged, or a failing dpkg-shlibdeps is a one-line error. What this does
# not do: build or install (make does), or sign anything.
set -u
umask 022
die() { echo "hvd: deb: $1" >&2; exit 1; }
[ $# = 5 ] || [ $# = 6 ] || die "'$*': usage: deb.sh STAGE OUT VERSION SLURM_VERSION MAINTAINER [ONEDNN_PREFIX]"
stage=$1 out=$2 version=$3 slurm=$4 maint=$5 onednn=${6:-}
# xz's level: dpkg's own default, or DEB_XZ_LEVEL (the suite packs with 1:
# the same contents, a fifth of the time)
xz_level=${DEB_XZ_LEVEL:-6}
[[ $xz_level =~ ^[0-9]$ ]] || die "DEB_XZ_LEVEL: '$xz_level': use 0 to 9"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
[ -d "$stage" ] || die "'$stage': no staged install there"
[[ $version =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || die "'$version': not a Debian version (VERSION)"
range=$("$here/slurm-range.sh" "$slurm") || exit 1
read -r slurm_mm slurm_next <<< "$range"
[[ $maint =~ ^[^\<\>]+\ \<[^@\<\>\ ]+@[^@\<\>\ ]+\>$ ]] || die "'$maint': not 'Name <address>' (set DEB_MAINTAINER)"
arch=$(dpkg --print-architecture) || die "'dpkg': not found (a Debian system builds the packages)"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null) || die "'dpkg-architecture': failed (install dpkg-dev)"
date=$(date -R ${SOURCE_DATE_EPOCH:+-d @$SOURCE_DATE_EPOCH})

rm -rf "$out"
mkdir -p "$out/root" && out=$(cd "$out" && pwd) || die "'$2': cannot make the folder"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Place every listed file in its package's root.
claimed="$tmp/claimed"
: > "$claimed"
while read -r pkg from to; do
	case $pkg in '' | '#'*) continue ;; esac
	from=${from//@MULTIARCH@/$multiarch}
	to=${to:-$from}
	[ -f "$stage/$from" ] || [ -L "$stage/$from" ] || die "'$from': in pkg/deb/files but not staged by make install"
	[ -f "$here/deb/$pkg.control" ] || die "'$pkg': in pkg/deb/files but pkg/deb/$pkg.control is missing"
	mkdir -p "$out/root/$pkg/$(dirname "$to")"
	cp -a "$stage/$from" "$out/root/$pkg/$to"
	# The packaged plugstack line is optional: a node where hvd.so cannot
	# load still runs jobs (spank/USAGE.md says how to make it required).
	case $to in etc/slurm/plugstack.conf.d/*)
		sed -i -e 's/^required /# hvd-slurm-plugin: optional, so a node where hvd.so cannot load still\
# runs jobs; write required to refuse them there (dpkg keeps the edit).\
optional /' "$out/root/$pkg/$to"
		grep -q '^optional /' "$out/root/$pkg/$to" || die "'$from': no 'required PLUGIN' line to make optional"
	esac
	echo "$from" >> "$claimed"
done < "$here/deb/files"
(cd "$stage" && find . -type f -o -type l) | sed 's|^\./||' | LC_ALL=C sort > "$tmp/staged"
LC_ALL=C sort "$claimed" > "$tmp/claimed.sorted"
stray=$(LC_ALL=C comm -23 "$tmp/staged" "$tmp/claimed.sorted" | head -1)
[ -z "$stray" ] || die "'$stray': staged by make install but no package ships it (add it to pkg/deb/files)"

# chexnet's run path: the bundled oneDNN's folder, or none.
private=usr/lib/$multiarch/chexnet
runpath=$(readelf -d "$out/root/chexnet/usr/bin/chexnet" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
: > "$tmp/onednn-note"
if [ -n "$onednn" ]; then
	[ "$runpath" = "\$ORIGIN/../lib/$multiarch/chexnet" ] ||
		die "'usr/bin/chexnet': run path '$runpath', not '\$ORIGIN/../lib/$multiarch/chexnet' (build it with make deb ONEDNN=3)"
	[ -f "$onednn/lib/libdnnl.so.3" ] && [ -f "$onednn/share/doc/onednn/LICENSE" ] &&
		[ -f "$onednn/share/doc/onednn/THIRD-PARTY-PROGRAMS" ] ||
		die "'$onednn': no lib/libdnnl.so.3 or share/doc/onednn/{LICENSE,THIRD-PARTY-PROGRAMS} (make deps ONEDNN=3)"
	dnnl=$(sed -n 's/^#define DNNL_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
		"$onednn/include/oneapi/dnnl/dnnl_version.h" 2> /dev/null | paste -sd.)
	[[ $dnnl =~ ^3\.[0-9]+\.[0-9]+$ ]] || die "'$onednn/include/oneapi/dnnl/dnnl_version.h': no oneDNN 3.x version"
	wheel=$(cut -d' ' -f1 "$onednn/.done" 2> /dev/null)
	[ -n "$wheel" ] || die "'$onednn/.done': missing (make deps ONEDNN=3)"
	mkdir -p "$out/root/chexnet/$private"
	cp -L "$onednn/lib/libdnnl.so.3" "$out/root/chexnet/$private/libdnnl.so.3" ||
		die "'$onednn/lib/libdnnl.so.3': cannot copy"
	cat > "$tmp/onednn-note" <<-EOF
	 .
	 This package bundles oneDNN $dnnl (PyPI's onednn-cpu-gomp $wheel,
	 Apache-2.0) as /$private/libdnnl.so.3,
	 which only chexnet loads (through its run path); it does not use
	 Debian's libdnnl.
	EOF
	# Debian keeps the Apache licence's text in common-licenses: name it
	grep -q 'Apache License' "$onednn/share/doc/onednn/LICENSE" &&
		grep -q 'Version 2\.0' "$onednn/share/doc/onednn/LICENSE" ||
		die "'$onednn/share/doc/onednn/LICENSE': not the Apache License 2.0"
	{ printf '\nFiles: /%s/libdnnl.so.3\n' "$private"
	  printf 'oneDNN %s (PyPI onednn-cpu-gomp %s), Copyright Intel Corporation,\n' "$dnnl" "$wheel"
	  printf 'under the Apache License 2.0: on Debian systems its text is in\n'
	  printf '/usr/share/common-licenses/Apache-2.0. The notices and licences of the\n'
	  printf 'third-party programs it contains are in\n/usr/share/doc/chexnet/%s.\n' \
		onednn-THIRD-PARTY-PROGRAMS.gz; } > "$tmp/onednn-copyright"
elif [ -n "$runpath" ]; then
	die "'usr/bin/chexnet': run path '$runpath': a package's programs have none (RPATH=0)"
fi

is_elf() { [ -f "$1" ] && [ ! -L "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# dpkg-shlibdeps reads debian/control from its working folder.
mkdir -p "$tmp/src/debian"
printf 'Source: hvd\n\nPackage: hvd\nArchitecture: any\n' > "$tmp/src/debian/control"

for ctl in "$here"/deb/*.control; do
	pkg=$(basename "$ctl" .control)
	root="$out/root/$pkg"
	[ -d "$root" ] || die "'$pkg': pkg/deb/$pkg.control but no file in pkg/deb/files"
	elves=()
	while IFS= read -r -d '' f; do
		is_elf "$f" || continue
		case $f in
		*.a) strip --strip-debug --enable-deterministic-archives -R .comment -R .note "$f" ;;
		*.so | *.so.*) strip --strip-unneeded -R .comment -R .note "$f" && chmod 0644 "$f"; elves+=("$f") ;;
		*) strip -R .comment -R .note "$f"; elves+=("$f") ;;
		esac || die "'$f': strip failed"
	done < <(find "$root" -type f -print0)
	if [ -d "$root/usr/share/man" ]; then
		find "$root/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} + || die "'$pkg': gzip of its man pages failed"
	fi
	doc="$root/usr/share/doc/$pkg"
	mkdir -p "$doc"
	{ printf 'hvd: distributed CheXNet training on Slurm.\n\n'; cat "$src/LICENSE"; } > "$doc/copyright"
	if [ "$pkg" = chexnet ] && [ -n "$onednn" ]; then
		cat "$tmp/onednn-copyright" >> "$doc/copyright"
		gzip -9n < "$onednn/share/doc/onednn/THIRD-PARTY-PROGRAMS" > "$doc/onednn-THIRD-PARTY-PROGRAMS.gz"
	fi
	grep -v '^#' "$here/deb/changelog" | sed -e "s|@VERSION@|$version|g" -e "s|@MAINTAINER@|$maint|g" \
		-e "s|@DATE@|$date|g" | gzip -9n > "$doc/changelog.gz"
	mkdir -p "$root/DEBIAN"
	shlibs=
	if [ ${#elves[@]} -gt 0 ]; then
		# spank_* (hvd.so) resolve in slurmstepd and srun: no library has them.
		# -S: a library found in the package (the bundled oneDNN) needs no dependency
		shlibs=$(cd "$tmp/src" && dpkg-shlibdeps -O --warnings=0 -S"$root" "${elves[@]/#/-e}" 2> "$tmp/shlibdeps.err") ||
			die "'$pkg': dpkg-shlibdeps failed: $(head -1 "$tmp/shlibdeps.err")"
		shlibs=${shlibs#shlibs:Depends=}
	fi
	if grep -q '@SHLIBS@' "$ctl" && [ -z "$shlibs" ]; then
		die "'$pkg': dpkg-shlibdeps found no dependency (no ELF file in the package?)"
	fi
	# a package holding a public shared library (not the private folder's):
	# its shlibs file and ldconfig trigger
	for f in "${elves[@]}"; do
		case $f in "$root/usr/lib/$multiarch"/lib*.so.[0-9]*) ;; *) continue ;; esac
		soname=$(objdump -p "$f" | sed -n 's/^ *SONAME *//p')
		[[ $soname =~ ^(.+)\.so\.([0-9]+)$ ]] || die "'$f': no SONAME lib*.so.N"
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} $pkg (>= $version)" >> "$root/DEBIAN/shlibs"
		echo "activate-noawait ldconfig" > "$root/DEBIAN/triggers"
	done
	if [ -d "$root/etc" ]; then
		(cd "$root" && find etc -type f | LC_ALL=C sort | sed 's|^|/|') > "$root/DEBIAN/conffiles"
	fi
	(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 md5sum) > "$root/DEBIAN/md5sums"
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	grep -v '^#' "$ctl" | sed -e "s|@VERSION@|$version|g" -e "s|@ARCH@|$arch|g" \
		-e "s|@MAINTAINER@|$maint|g" -e "s|@INSTALLED_SIZE@|$size|g" -e "s|@SHLIBS@|$shlibs|g" \
		-e "s|@SLURM_MM@|$slurm_mm|g" -e "s|@SLURM_NEXT@|$slurm_next|g" \
		-e "/^@ONEDNN@\$/{r $tmp/onednn-note" -e 'd;}' > "$root/DEBIAN/control"
	find "$root" -type d -exec chmod 0755 {} +
	dpkg-deb --root-owner-group -Zxz -z"$xz_level" --build "$root" "$out/${pkg}_${version}_$arch.deb" > /dev/null ||
		die "'$pkg': dpkg-deb --build failed"
	echo "$out/${pkg}_${version}_$arch.deb"
done
