#!/usr/bin/env bash
# pyenv.sh BUILD - the tests' Python packages in BUILD/pyenv: a virtual
# environment (python3 -m venv; Debian's python3-venv, from mk/deps.sh)
# with every line of tests/pyenv.txt installed from PyPI. Each line pins
# one package (name==version, extras allowed); an unpinned line is an
# error. Idempotent: BUILD/pyenv/.stamp holds the SHA-256 of pyenv.txt and
# a second call with the same file does nothing; concurrent calls wait on
# a lock. Only tests, bench/ and contrib/ use it: the product needs no
# Python. What it does not do: install Debian packages (mk/deps.sh).
set -eu
build=${1:?usage: pyenv.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
list="$here/pyenv.txt"
env="$build/pyenv"
want=$(sha256sum < "$list" | cut -d' ' -f1)
[ "$(cat "$env/.stamp" 2>/dev/null)" = "$want" ] && exit 0
mkdir -p "$build"
exec 9> "$build/.pyenv.lock"
flock 9
[ "$(cat "$env/.stamp" 2>/dev/null)" = "$want" ] && exit 0
pins=()
n=0
while IFS= read -r line || [ -n "$line" ]; do
	n=$((n + 1))
	line=${line%%#*}
	line=$(echo "$line" | tr -d '[:space:]')
	[ -z "$line" ] && continue
	if ! [[ "$line" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9.+!_-]+$ ]]; then
		echo "hvd: pyenv: $list:$n: '$line': not pinned as name==version" >&2
		exit 1
	fi
	pins+=("$line")
done < "$list"
rm -f "$env/.stamp"
python3 -m venv "$env" || { echo "hvd: pyenv: 'python3 -m venv $env': failed (python3-venv)" >&2; exit 1; }
if [ ${#pins[@]} -gt 0 ] && ! "$env/bin/pip" install -q --disable-pip-version-check \
		"${pins[@]}" > "$build/pyenv.log" 2>&1; then
	tail -5 "$build/pyenv.log" >&2
	echo "hvd: pyenv: 'pip install ${pins[*]}': failed (log in $build/pyenv.log)" >&2
	exit 1
fi
echo "$want" > "$env/.stamp"
