#!/bin/sh
# local_rsh.sh - stands in for ssh in contrib/hvdrun's tests: runs the
# command line on this machine (the host must be a loopback address) with
# its standard input a pipe that this process holds open, so the command
# sees end of file when this process is gone, as a remote command does
# when its ssh connection ends. What it does not do: anything remote.
host=$1
shift
case $host in
127.0.0.1 | localhost) ;;
*) echo "local_rsh: '$host': only loopback here" >&2; exit 255 ;;
esac
d=$(mktemp -d) && mkfifo "$d/in" || exit 255
sh -c "$*" < "$d/in" &
child=$!
exec 5> "$d/in"
rm -rf "$d"
wait $child
