#!/usr/bin/env bash
# pyenv.sh BUILD - the tests' Python packages, reached as BUILD/pyenv: a
# virtual environment (python3 -m venv; Debian's python3-venv, from
# mk/deps.sh) with every line of tests/pyenv.txt installed from PyPI.
# Each line pins one package (name==version, extras allowed); an unpinned
# line is an error. The environment itself lives in the user's cache,
# HVD_PYENV_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/hvd), named by the
# SHA-256 of pyenv.txt and the python3 that made it, and BUILD/pyenv is a
# link to it: every build and clone of one pyenv.txt shares one
# environment, as they share the Debian packages mk/deps.sh installs; a
# changed pyenv.txt or python3 makes a new one. Where the cache cannot be
# written the environment is made in BUILD/pyenv itself. Idempotent (a
# stamp in the environment holds its name); concurrent calls wait on a
# lock. Only tests, bench/ and contrib/ use it: the product needs no
# Python. What it does not do: install Debian packages (mk/deps.sh), or
# remove environments of older pyenv.txt files from the cache.
set -eu
build=${1:?usage: pyenv.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
list="$here/pyenv.txt"
link="$build/pyenv"
want=$( { cat "$list"; python3 --version; readlink -f "$(command -v python3)"; } | sha256sum | cut -d' ' -f1)
[ "$(cat "$link/.stamp" 2>/dev/null)" = "$want" ] && exit 0
mkdir -p "$build"
cache=${HVD_PYENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hvd}
if mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
	env="$cache/pyenv-${want:0:16}" lock="$cache/.pyenv-${want:0:16}.lock"
else
	env="$link" lock="$build/.pyenv.lock"
fi
exec 9> "$lock"
flock 9
# BUILD/pyenv: the link to env (an environment made there by an older
# pyenv.sh is replaced)
point_link() {
	[ "$env" = "$link" ] && return 0
	if [ -e "$link" ] && [ ! -L "$link" ]; then rm -rf "$link"; fi
	ln -sfn "$env" "$link.tmp$$" && mv -T "$link.tmp$$" "$link"
}
if [ "$(cat "$env/.stamp" 2>/dev/null)" = "$want" ]; then
	point_link
	exit 0
fi
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
rm -rf "$env"
python3 -m venv "$env" || { echo "hvd: pyenv: 'python3 -m venv $env': failed (python3-venv)" >&2; exit 1; }
if [ ${#pins[@]} -gt 0 ] && ! "$env/bin/pip" install -q --disable-pip-version-check \
		"${pins[@]}" > "$build/pyenv.log" 2>&1; then
	tail -5 "$build/pyenv.log" >&2
	echo "hvd: pyenv: 'pip install ${pins[*]}': failed (log in $build/pyenv.log)" >&2
	exit 1
fi
echo "$want" > "$env/.stamp"
point_link
