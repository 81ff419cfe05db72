#!/bin/sh
# local_rsh.sh - stands in for ssh in contrib/hvdrun's tests: runs the
# command line on this machine (the host must be a loopback address) with
# its standard input a pipe that this process holds open and through
# which it forwards its own standard input, so the command sees end of
# file when this process's input ends or this process is gone, as a
# remote command does when ssh's input ends or its connection does. What
# it does not do: anything remote.
host=$1
shift
case $host in
127.0.0.1 | localhost) ;;
*) echo "local_rsh: '$host': only loopback here" >&2; exit 255 ;;
esac
d=$(mktemp -d) && mkfifo "$d/in" || exit 255
sh -c "$*" < "$d/in" &
child=$!
exec 5> "$d/in" 6<&0
rm -rf "$d"
# the end of this input closes the pipe (nothing is ever written to it)
trap 'exec 5>&-; closed=1' USR1
{ while read -r _; do :; done; kill -USR1 $$; } <&6 5>&- > /dev/null 2>&1 &
reader=$!
exec 6<&-
# killed: the command's input ends at once, as when ssh is killed
trap 'kill $reader 2> /dev/null; exit 143' TERM
trap 'kill $reader 2> /dev/null; exit 130' INT
while :; do
	closed=
	wait $child
	rc=$?
	# the trap above ends wait with a status above 128: wait again
	[ -n "$closed" ] && [ $rc -gt 128 ] && continue
	break
done
kill $reader 2> /dev/null
exit $rc
