#!/usr/bin/env bash
# uninstall.sh DESTDIR MANIFEST DIR... -- FILE... - `make uninstall`
# (mk/install.mk). MANIFEST (under DESTDIR) names, one a line and without
# DESTDIR, each file `make install` wrote and each folder it recorded as
# made (a line ending in /). DIR... are the install directories (bindir,
# libdir, libexecdir, includedir, datadir, mandir, pkgconfigdir, SPANK_PLUGIN_DIR),
# FILE... every file an install rule of this tree writes.
# The manifest and the folders it names are writable by whoever installed,
# and root may run this: every path is checked when it is acted on, through
# the name then used, never from an earlier look.
# - Read once: the manifest is read into memory, once, and only when it is
#   a regular file (not a symbolic link) with no link on its path under
#   DESTDIR, the file as opened being the one at its path. It is never read
#   again: what is removed is exactly what was checked.
# - Checked whole first: a line is refused when it is not an absolute
#   path, has '//' or a '.' or '..' component, lies outside the install
#   directories, is not one of FILE... (a folder line: not a folder on
#   the way to one), when a component of its path under DESTDIR is a
#   symbolic link, or when the file there is neither a regular file nor a
#   link to a name in its own folder (what `ln -sf libhvd.so.0` makes; the
#   link itself is removed, never its target). Each refused line is one
#   line `hvd: uninstall: 'LINE': REASON`, nothing is removed, exit 1.
# - Checked again at removal: just before a file goes, its line is checked
#   again as above; then its folder is entered and must be, as the kernel
#   names the folder entered, DESTDIR's own followed by the line's (no link
#   on the way at that moment), and the file is removed by its name in
#   that folder (rm and rmdir never follow a link there). A line that
#   fails is named, left alone and kept in the manifest.
# - Rewritten without following a link: what is left goes to a new file in
#   the manifest's folder (a random name opened with O_EXCL: never an
#   existing file) renamed over the manifest, so a link put in its place is
#   replaced, not written through.
# A tree installed by a package (MANIFEST's folder holds a marker in
# installed-by-package.d/, one file per package, or installed-by-package)
# is refused in one line naming apt and dnf. Else it removes every file
# the manifest names, the manifest, and each recorded folder once empty,
# deepest first; the manifest's own folder only when recorded. Each file
# it could not remove (not there, changed since, or rm failed) is one line
# `hvd: uninstall: 'PATH': REASON`, the exit status is then 1, and the
# manifest keeps what is still there, for another try. With no manifest
# nothing is removed (exit 1). What it does not do: remove a folder that
# is not empty or was not recorded, follow a symbolic link, or touch a
# file the manifest does not name.
set -u
umask 022
unset CDPATH
say() { echo "hvd: uninstall: '$1': $2" >&2; }
squeeze() { local s=$1; while [[ $s == *//* ]]; do s=${s//\/\//\/}; done; printf '%s' "${s%/}"; }
destdir=$1 manifest=$1$2 mrel=$(squeeze "$2")
mdir=${mrel%/*} mname=${mrel##*/}
shift 2
dirs=() files=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do dirs+=("$(squeeze "$1")"); shift; done
[ $# -gt 0 ] && shift
for f; do files+=("$(squeeze "$f")"); done

# the first component of the path of $1 (under DESTDIR) that is a link
linked() {
	local rest=${1#/} p=
	while [ -n "$rest" ]; do
		p+=/${rest%%/*}
		[[ $rest == */* ]] && rest=${rest#*/} || rest=
		if [ -L "$destdir$p" ]; then printf '%s' "$p"; return 0; fi
	done
	return 1
}

# The package markers: the first one there, if any.
package_marker() {
	local m
	for m in "$destdir$mdir"/installed-by-package.d/* "$destdir$mdir"/installed-by-package; do
		if [ -e "$m" ] || [ -L "$m" ]; then printf '%s' "$m"; return 0; fi
	done
	return 1
}
if m=$(package_marker); then
	say "$m" "hvd was installed here by a package: remove it with apt (apt remove hvd-slurm-plugin chexnet libhvd0 libhvd-dev) or dnf (dnf remove hvd-slurm-plugin chexnet libhvd libhvd-devel): nothing removed"
	exit 1
fi
if l=$(linked "$mrel"); then
	say "$manifest" "'$l' on its path is a symbolic link: not read, nothing removed"
	exit 1
fi
if [ ! -f "$manifest" ]; then
	say "$manifest" "no install manifest there (make install writes it, with the same DESTDIR and datadir): nothing removed"
	exit 1
fi
# DESTDIR as the kernel names it (a link in DESTDIR itself is the caller's)
top=$(cd -P -- "${destdir:-/}" && env pwd -P) || exit 1
top=${top%/}

# Enters (cd) the folder $1 (a path under DESTDIR, '' for DESTDIR) and
# checks, on the folder entered, that no link led elsewhere: from then on
# a name in it is a name in that folder, whatever happens to its path.
# Only in a subshell.
enter() {
	local want=$top$1
	cd -P -- "$destdir${1:-/}" 2> /dev/null && [ "$(env pwd -P)" = "${want:-/}" ]
}

# The manifest's text, then '.', read once through the descriptor opened:
# the regular file at its path, in its folder entered.
read_manifest() (
	enter "$mdir" || exit 1
	[ -f "./$mname" ] && [ ! -L "./$mname" ] || exit 1
	exec 3< "./$mname" || exit 1
	[ "$(stat -L -c %d:%i /dev/fd/3)" = "$(stat -c %d:%i -- "./$mname")" ] || exit 1
	cat <&3 && echo .
)
if ! text=$(read_manifest); then
	say "$manifest" "changed while it was opened (a link or another file put in its place): not read, nothing removed"
	exit 1
fi
text=${text%.}
mapfile -t lines < <(printf '%s' "$text")

# why line $1 may not be acted on (nothing when it may)
refusal() {
	local f=$1 p=${1%/} d k ok=
	case $f in
	/) echo "the root folder"; return ;;
	/*) ;;
	*) echo "not an absolute path"; return ;;
	esac
	[[ $f == *//* ]] && { echo "has '//'"; return; }
	[[ $p/ == */./* || $p/ == */../* ]] && { echo "has a '.' or '..' component"; return; }
	for d in "${dirs[@]}"; do
		# a folder install made on the way to an install directory, or under one
		if [[ $p/ == "$d"/* || ( $f == */ && $d/ == "$p"/* ) ]]; then ok=1; break; fi
	done
	[ -n "$ok" ] || { echo "outside the install directories (${dirs[*]})"; return; }
	ok=
	for k in "${files[@]}"; do
		if [[ $f == */ ]]; then [[ $k == "$p"/* ]] && ok=1; else [ "$k" = "$f" ] && ok=1; fi
		[ -n "$ok" ] && break
	done
	[ -n "$ok" ] || { [[ $f == */ ]] && echo "not a folder on the way to a file make install writes" ||
		echo "not a file make install writes"; return; }
	if d=$(linked "$p"); then
		# the leaf may be a link to a name in its own folder, as install makes
		if [ "$d" != "$p" ] || [[ $f == */ ]]; then echo "'$d' on its path is a symbolic link"; return; fi
		k=$(readlink -- "$destdir$p")
		[[ -n $k && $k != */* && $k != . && $k != .. ]] || { echo "a symbolic link to '$k', not what make install made"; return; }
	elif [[ $f != */ ]] && [ -e "$destdir$p" ] && [ ! -f "$destdir$p" ] && [ ! -d "$destdir$p" ]; then
		echo "not a regular file"
	fi
}

# The whole manifest first: one bad line and nothing is removed.
bad=0
for f in "${lines[@]}"; do
	why=$(refusal "$f")
	[ -z "$why" ] && continue
	say "$f" "in $manifest: $why: nothing removed"
	bad=1
done
[ $bad = 0 ] || exit 1

# COMMAND... (rm -f, rmdir) on the name $2 in the folder $1, entered and checked
in_folder() (
	enter "$1" || { echo "its folder is not '$top$1' now (a symbolic link on its path?)"; exit 1; }
	"${@:3}" -- "./$2"
)

status=0
kept=
folders=
for f in "${lines[@]}"; do
	p=$destdir$f
	case $f in */) folders+=$f$'\n'; continue ;; esac
	[ "$f" = "$mrel" ] && continue
	why=$(refusal "$f")
	if [ -n "$why" ]; then
		say "$p" "$why now: left alone"
		status=1
		kept+=$f$'\n'
	elif [ ! -e "$p" ] && [ ! -L "$p" ]; then
		say "$p" "not there (removed already?)"
		status=1
	elif [ -d "$p" ] && [ ! -L "$p" ]; then
		say "$p" "a folder, not the installed file: left alone"
		status=1
		kept+=$f$'\n'
	elif ! err=$(in_folder "${f%/*}" "${f##*/}" rm -f 2>&1); then
		say "$p" "could not remove it: ${err##*: }"
		status=1
		kept+=$f$'\n'
	fi
done

# The manifest naming $1: a new file beside it, renamed over it.
rewrite() (
	enter "$mdir" || exit 1
	set -C
	tmp=$(mktemp -u -- "./.$mname.XXXXXXXXXX") && exec 4> "$tmp" || exit 1
	# noclobber opens an existing name only when it is not a regular file
	[ -f /dev/fd/4 ] || exit 1
	printf '%s' "$1" >&4 && exec 4>&- && mv -fT -- "$tmp" "./$mname" || { rm -f -- "$tmp"; exit 1; }
)
if [ -n "$kept" ]; then
	rewrite "$kept$folders" || { say "$manifest" "could not write what is left: nothing more removed"; exit 1; }
	say "$manifest" "kept, naming the files above that are still there"
	exit 1
fi
if ! err=$(in_folder "$mdir" "$mname" rm -f 2>&1); then
	say "$manifest" "could not remove it: ${err##*: }"
	exit 1
fi
# deepest first: a folder sorts after every folder that holds it; only
# recorded ones (made by an install), only empty ones, never through a link
printf '%s' "$folders" | LC_ALL=C sort -ru | while IFS= read -r d; do
	d=${d%/}
	[ -n "$d" ] && in_folder "${d%/*}" "${d##*/}" rmdir > /dev/null 2>&1
done
exit $status
