#!/usr/bin/env bash
# uninstall.sh DESTDIR MANIFEST DIR... -- FILE... - `make uninstall`
# (mk/install.mk). MANIFEST (under DESTDIR) names, one a line and without
# DESTDIR, each file `make install` wrote and each folder it made (a line
# ending in /: a folder that was not there before). DIR... are the install
# directories (bindir, libdir, includedir, datadir, mandir, pkgconfigdir,
# SPANK_PLUGIN_DIR), FILE... every file an install rule of this tree
# writes. The manifest is writable by whoever installed and root may run
# this, so it is checked whole before anything is removed: a line is
# refused when it is not an absolute path, has '//' or a '.' or '..'
# component, lies outside the install directories, is not one of FILE...
# (a folder line: not a folder on the way to one), when a component of
# its path under DESTDIR is a symbolic link, or when the file there is
# neither a regular file nor a link to a name in its own folder (what
# `ln -sf libhvd.so.0` makes; the link itself is removed, never its
# target). Each refused line is one line `hvd: uninstall: 'LINE':
# REASON`, nothing is removed and the exit status is 1. A tree installed
# by a package (MANIFEST's folder holds installed-by-package, which the
# packages ship instead of a manifest) is refused in one line naming apt
# and dnf. Then it removes every file the manifest names, the manifest,
# and each recorded folder once empty, deepest first; the manifest's own
# folder only when recorded. Each file it could not remove (not there, or
# rm failed) is one line `hvd: uninstall: 'PATH': REASON`, the exit status
# is then 1, and the manifest keeps what is still there, for another try.
# With no manifest nothing is removed (exit 1). What it does not do:
# remove a folder that is not empty or was not recorded, follow a
# symbolic link, or touch a file the manifest does not name.
set -u
say() { echo "hvd: uninstall: '$1': $2" >&2; }
squeeze() { local s=$1; while [[ $s == *//* ]]; do s=${s//\/\//\/}; done; printf '%s' "${s%/}"; }
destdir=$1 manifest=$1$2 mrel=$(squeeze "$2")
mdir=${mrel%/*}
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

marker=$destdir$mdir/installed-by-package
if [ -e "$marker" ] || [ -L "$marker" ]; then
	say "$marker" "hvd was installed here by a package: remove it with apt (apt remove hvd-slurm-plugin chexnet libhvd0 libhvd-dev) or dnf (dnf remove hvd-slurm-plugin chexnet libhvd libhvd-devel): nothing removed"
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
while IFS= read -r f; do
	why=$(refusal "$f")
	[ -z "$why" ] && continue
	say "$f" "in $manifest: $why: nothing removed"
	bad=1
done < "$manifest"
[ $bad = 0 ] || exit 1

status=0
kept=
folders=
while IFS= read -r f; do
	p=$destdir$f
	case $f in */) folders+=$f$'\n'; continue ;; esac
	[ "$f" = "$mrel" ] && continue
	if [ ! -e "$p" ] && [ ! -L "$p" ]; then
		say "$p" "not there (removed already?)"
		status=1
	elif [ -d "$p" ] && [ ! -L "$p" ]; then
		say "$p" "a folder, not the installed file: left alone"
		status=1
		kept+=$f$'\n'
	elif ! err=$(rm -f -- "$p" 2>&1); then
		say "$p" "could not remove it: ${err##*: }"
		status=1
		kept+=$f$'\n'
	fi
done < "$manifest"
if [ -n "$kept" ]; then
	printf '%s%s' "$kept" "$folders" > "$manifest" || exit 1
	say "$manifest" "kept, naming the files above that are still there"
	exit 1
fi
rm -f -- "$manifest" || exit 1
# deepest first: a folder sorts after every folder that holds it; only
# recorded ones (made by an install), only empty ones, never through a link
printf '%s' "$folders" | LC_ALL=C sort -ru | while IFS= read -r d; do
	[ -n "$d" ] && [ -d "$destdir$d" ] && [ ! -L "$destdir${d%/}" ] && rmdir -- "$destdir$d" 2> /dev/null
done
exit $status
