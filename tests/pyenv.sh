#!/usr/bin/env bash
# pyenv.sh BUILD - the tests' Python virtual environment: BUILD/pyenv
# (python3 -m venv) holding exactly the pinned (==) lines of
# tests/pyenv.txt, pip-installed from PyPI. Idempotent: BUILD/pyenv/.stamp
# holds the SHA-256 of pyenv.txt it was made from; a changed pyenv.txt
# makes it again. Prints nothing when it is up to date; on failure one
# line `hvd: pyenv: ...` and exit 1. Only reference scripts of the tests
# use it; the product never does.
set -u
build=${1:?usage: tests/pyenv.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
list="$here/pyenv.txt"
env="$build/pyenv"
want=$(sha256sum "$list" | cut -d' ' -f1)
[ -x "$env/bin/python" ] && [ "$(cat "$env/.stamp" 2>/dev/null)" = "$want" ] && exit 0
pins=$(grep -E '^[A-Za-z0-9_.-]+==[^ ]+$' "$list")
if grep -vE '^[[:space:]]*(#.*)?$' "$list" | grep -qvE '^[A-Za-z0-9_.-]+==[^ ]+$'; then
	echo "hvd: pyenv: '$list': every line must be NAME==VERSION or a comment" >&2
	exit 1
fi
rm -rf "$env"
log="$build/pyenv.log"
mkdir -p "$build"
if ! python3 -m venv "$env" > "$log" 2>&1; then
	echo "hvd: pyenv: python3 -m venv '$env' failed (make deps installs python3-venv; log: $log)" >&2
	exit 1
fi
# shellcheck disable=SC2086
if ! "$env/bin/pip" install -q --disable-pip-version-check --no-input $pins >> "$log" 2>&1; then
	echo "hvd: pyenv: pip install of '$list' failed (log: $log)" >&2
	rm -rf "$env"
	exit 1
fi
echo "$want" > "$env/.stamp"
