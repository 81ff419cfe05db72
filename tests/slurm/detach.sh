# detach.sh - sourced by cluster.sh and multinode.sh. `detached LOG CMD...`
# starts a daemon with stdin from /dev/null, stdout and stderr appended to
# LOG, no other descriptor of ours, and hwloc's GL component off. A daemon
# that inherits a pipe (the test runner's, a caller's $(...)) holds it open
# for as long as it lives; hwloc's GL probe waits forever on anything that
# listens on ports 6000-6009 (spank/USAGE.md, "hwloc"). What it does not do:
# check that the daemon came up (its caller waits for that).
# `alive PID`: whether PID runs. A detached daemon's parent is init, and
# an init that reaps once a second (a VM's process_api) leaves an ended
# daemon a zombie, which `kill -0` still finds: a zombie counts as gone.
detached() {   # detached LOG CMD [ARG]...
	local log=$1
	shift
	(
		for fd in $(ls /proc/self/fd); do   # ours, and ls's own: both go
			[ "$fd" -gt 2 ] && [ "$fd" != 255 ] && eval "exec $fd>&-"
		done
		export HWLOC_COMPONENTS=-gl
		exec "$@" </dev/null >>"$log" 2>&1
	)
}

alive() {   # alive PID
	local state
	state=$(awk '$1 == "State:" { print $2; exit }' "/proc/$1/status" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}
