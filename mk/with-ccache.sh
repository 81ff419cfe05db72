#!/bin/sh
# with-ccache.sh B COMMAND [ARG...] - runs COMMAND with ccache's compiler
# links (/usr/lib/ccache: cc, gcc, c++, clang) first in PATH and the cache
# in B/ccache, so that every compile under it (make, and the makes the
# suite runs: the emulated device's build, the packages', the build cases')
# reuses the objects of an identical compile; without Debian's ccache
# (make test-deps installs it) COMMAND runs as it is.
# What it does not do: change CC or CXX (the detection key keeps them, so
# a plain make and make check share one build), or cache across B's.
set -eu
[ $# -ge 2 ] || { echo "hvd: with-ccache: usage: with-ccache.sh B COMMAND [ARG...]" >&2; exit 2; }
b=$1
shift
if [ -x /usr/lib/ccache/cc ]; then
	mkdir -p "$b/ccache"
	PATH=/usr/lib/ccache:$PATH
	CCACHE_DIR=$(cd "$b/ccache" && pwd)
	export PATH CCACHE_DIR
fi
exec "$@"
