# detach.sh - sourced by cluster.sh and multinode.sh: `detached LOG CMD...`
# starts a daemon with stdin from /dev/null, stdout and stderr appended to
# LOG, and no other descriptor of ours: a daemon that inherits a pipe (the
# test runner's, a caller's $(...)) holds it open for as long as it lives.
# What it does not do: check that the daemon came up (its caller waits).
detached() {   # detached LOG CMD [ARG]...
	local log=$1
	shift
	(
		for fd in $(ls /proc/self/fd); do   # ours, and ls's own: both go
			[ "$fd" -gt 2 ] && [ "$fd" != 255 ] && eval "exec $fd>&-"
		done
		exec "$@" </dev/null >>"$log" 2>&1
	)
}
