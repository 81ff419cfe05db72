#!/usr/bin/env bash
# uninstall.sh DESTDIR MANIFEST - `make uninstall` (mk/install.mk): removes
# every file DESTDIR/MANIFEST names (one absolute path a line, written by
# `make install`; the file under DESTDIR), then the manifest, then each
# folder it names (a line ending in /: one install made) and the
# manifest's own folder, deepest first, those that are empty. Each file it
# could not remove (not there, or rm failed) is one line `hvd: uninstall:
# 'PATH': REASON`, and the exit status is then 1; the manifest then keeps
# what is still there, for another try. With no manifest nothing is
# removed (exit 1). What it does not do: remove a folder that is not
# empty, follow a line that is not an absolute path, or touch a file the
# manifest does not name.
set -u
destdir=$1 manifest=$1$2
say() { echo "hvd: uninstall: '$1': $2" >&2; }
if [ ! -f "$manifest" ]; then
	say "$manifest" "no install manifest there (make install writes it, with the same DESTDIR and datadir): nothing removed"
	exit 1
fi
status=0
kept=
folders=
while IFS= read -r f; do
	p=$destdir$f
	case $f in
	/*/ | /) folders+=$f$'\n'; continue ;;
	/*) ;;
	*) say "$f" "in $manifest but not an absolute path: left alone"; status=1; kept+=$f$'\n'; continue ;;
	esac
	[ "$p" = "$manifest" ] && continue
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
# deepest first: a folder sorts after every folder that holds it
printf '%s%s\n' "$folders" "${2%/*}/" | LC_ALL=C sort -ru | while IFS= read -r d; do
	[ -n "$d" ] && [ -d "$destdir$d" ] && rmdir -- "$destdir$d" 2> /dev/null
done
exit $status
