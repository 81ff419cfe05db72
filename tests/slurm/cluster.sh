#!/usr/bin/env bash
# cluster.sh up|down|status DIR [BUILD] - a one-node Slurm cluster for tests.
#
# up: munged (its own key and socket), slurmctld and slurmd on 127.0.0.1 as
# root, every file under DIR: slurm.conf/gres.conf from the templates beside
# this script, state, spool, logs, pid files, fake GPU device nodes
# (DIR/dev/nvidia0..3), a plugstack.conf loading BUILD/hvd.so, and a private
# /dev/shm for slurmd and its jobs (a mount namespace of their own). Waits
# until the node is idle. Clients use SLURM_CONF=DIR/slurm.conf.
# down: cancels jobs, stops the daemons (TERM, then KILL), removes DIR
# (kept when HVD_TEST_KEEP=1). Never touches /etc/slurm, /dev or the
# machine's own munged. What it does not do: multi-node (see multinode.sh).
#
# HVD_CLUSTER_CGROUP=1: Slurm's real task plugins instead of task/none:
# TaskPlugin=task/cgroup,task/affinity, ProctrackType=proctrack/cgroup and a
# cgroup.conf (ConstrainCores, ConstrainDevices; the cgroup version Slurm
# detects). If slurmd does not come up with them, its log's error lines are
# printed and the cluster starts again with task/affinity alone
# (proctrack/linuxproc). DIR/plugins says what runs: its first line the
# TaskPlugin, ProctrackType and cgroup version, later lines why cgroup
# was refused. HVD_CLUSTER_CGROUP=2: task/affinity alone
# (proctrack/linuxproc), no cpuset cgroup. Tried on cgroup v1 only (the machine it was written on has
# v1, with an empty v2 hierarchy at /sys/fs/cgroup/unified); v2 not tried.
set -u
. "$(dirname "$0")/detach.sh"
. "$(dirname "$0")/ports.sh"
here=$(cd "$(dirname "$0")" && pwd)
verb=${1:?usage: cluster.sh up|down|status DIR [BUILD]}
dir=${2:?usage: cluster.sh up|down|status DIR [BUILD]}
build=${3:-}
export SLURM_CONF="$dir/slurm.conf"
host=$(hostname -s)

die() { echo "hvd: cluster: $*" >&2; exit 1; }


pid_of() { [ -s "$1" ] && cat "$1" 2>/dev/null; }

stop_pidfile() {   # stop_pidfile FILE NAME
	local pid
	pid=$(pid_of "$1") || return 0
	[ -n "$pid" ] && alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		alive "$pid" || return 0
		sleep 0.1
	done
	echo "hvd: cluster: $2 (pid $pid) ignored TERM for 10 s: killing" >&2
	kill -KILL "$pid" 2>/dev/null
}

render() {   # render TEMPLATE OUT
	sed -e "s|@DIR@|$dir|g" -e "s|@HOST@|$host|g" \
	    -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" "$1" > "$2"
}

start_munge() {
	mkdir -p "$dir/munge"
	chmod 755 "$dir/munge"
	dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
	chown munge:munge "$dir/munge" "$dir/munge/munge.key"
	chmod 400 "$dir/munge/munge.key"
	detached "$dir/munge/munged.out" runuser -u munge -- munged --force --socket="$dir/munge/munge.sock" \
		--key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
		|| die "munged did not start (see $dir/munge/munged.log)"
}

# (a slurmctld that never answers holds each sinfo for its whole message
# timeout: each is bounded, and the daemons' last lines are said, as the
# folder goes with the cluster)
wait_idle() {   # wait_idle SECONDS: 1 when the node is not idle by then
	local st end=$(( SECONDS + $1 ))
	while [ "$SECONDS" -lt "$end" ]; do
		st=$(timeout 5 sinfo -h -n "$host" -o %t 2>/dev/null)
		case "$st" in idle|mix|alloc) return 0 ;; esac
		sleep 0.1
	done
	echo "hvd: cluster: node $host not idle after $1 s (state '$st'; logs in $dir/log)" >&2
	tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 2>/dev/null
	return 1
}

cgroup_version() {
	case "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" in
		cgroup2fs) echo v2 ;;
		tmpfs) echo v1 ;;
		*) echo none ;;
	esac
}

# The real task plugins (HVD_CLUSTER_CGROUP=1), or task/affinity alone.
use_plugins() {   # use_plugins cgroup|affinity
	local task=task/affinity track=proctrack/linuxproc
	if [ "$1" = cgroup ]; then
		task=task/cgroup,task/affinity track=proctrack/cgroup
		printf 'CgroupPlugin=autodetect\nCgroupAutomount=no\nConstrainCores=yes\nConstrainDevices=yes\nConstrainRAMSpace=no\n' \
			> "$dir/cgroup.conf"
	fi
	sed -i -e "s|^TaskPlugin=.*|TaskPlugin=$task|" -e "s|^ProctrackType=.*|ProctrackType=$track|" \
		"$dir/slurm.conf"
	echo "TaskPlugin=$task ProctrackType=$track cgroup=$(cgroup_version)" > "$dir/plugins.new"
}

start_daemons() {
	detached "$dir/log/slurmctld.out" slurmctld -c -f "$dir/slurm.conf" || { echo "hvd: cluster: slurmctld did not start (see $dir/log/slurmctld.log)" >&2; return 1; }
	# slurmd (and so every job step) gets a private /dev/shm in its own mount
	# namespace: shared-memory files of killed ranks (OpenMPI's vader
	# segments) vanish with the cluster instead of staying on the machine.
	detached "$dir/log/slurmd.out" unshare --mount --propagation slave -- /bin/sh -c \
		'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"' sh slurmd -f "$dir/slurm.conf" \
		|| { echo "hvd: cluster: slurmd did not start (see $dir/log/slurmd.log)" >&2; return 1; }
	wait_idle "$1"
}

# cgroup plugins refused: say why (slurmd's errors), then task/affinity.
fall_back() {
	grep -hiE 'error|fatal' "$dir/log/slurmd.log" 2>/dev/null | tail -n 5 > "$dir/plugins.why"
	echo "hvd: cluster: slurmd refused the cgroup plugins; task/affinity alone:" >&2
	sed 's/^/  /' "$dir/plugins.why" >&2
	stop_pidfile "$dir/run/slurmd.pid" slurmd
	stop_pidfile "$dir/run/slurmctld.pid" slurmctld
	remove_cgroups
	rm -rf "$dir/state" "$dir/spool" "$dir/cgroup.conf" && mkdir -p "$dir/state" "$dir/spool"
	chmod 755 "$dir/spool"
	use_plugins affinity
	cat "$dir/plugins.new" "$dir/plugins.why" > "$dir/plugins"
	start_daemons 30
}

up() {
	[ "$(id -u)" = 0 ] || die "needs root"
	case "${HVD_CLUSTER_CGROUP:-0}" in 0|1|2) ;; *) die "HVD_CLUSTER_CGROUP: '$HVD_CLUSTER_CGROUP': use 0, 1 or 2" ;; esac
	if [ -f "$dir/run/slurmctld.pid" ] && alive "$(pid_of "$dir/run/slurmctld.pid")"; then
		die "a cluster already runs in '$dir'"
	fi
	mkdir -p "$dir"/{state,spool,run,log,dev}
	chmod 755 "$dir" "$dir/spool"
	read -r ctld_port slurmd_port < <(pick_ports) || die "no free port pair"
	for i in 0 1 2 3; do
		mknod "$dir/dev/nvidia$i" c 195 "$i" || die "mknod '$dir/dev/nvidia$i' failed"
	done
	render "$here/slurm.conf.in" "$dir/slurm.conf"
	render "$here/gres.conf.in" "$dir/gres.conf"
	# (runtime) mpi/pmix keeps a per-step dir /tmp/spmix_appdir_UID_JOB.STEP
	# and leaves it behind when a step is cancelled; job ids restart at 1 in
	# every test cluster, so a stale one makes a later step fail to launch
	# ("task 0 launch failed: Unspecified error"). Keep it in DIR instead.
	mkdir -p "$dir/pmix" && echo "PMIxCliTmpDirBase=$dir/pmix" > "$dir/mpi.conf"
	# (runtime) OpenMPI names its shared-memory segments after the job id
	# (/dev/shm/vader_segment.HOST.0.HASH.RANK); a rank killed by a test
	# leaves its segment, and a later cluster reusing that job id attaches
	# to it and crashes. Start every cluster at its own job id.
	echo "FirstJobId=$(( (RANDOM * 32768 + RANDOM) % 60000000 + 1000 ))" >> "$dir/slurm.conf"
	if [ -n "$build" ] && [ -f "$build/hvd.so" ]; then
		echo "required $build/hvd.so" > "$dir/plugstack.conf"
	else
		: > "$dir/plugstack.conf"
	fi
	start_munge
	if [ "${HVD_CLUSTER_CGROUP:-0}" = 1 ]; then
		use_plugins cgroup
		mv "$dir/plugins.new" "$dir/plugins"
		start_daemons 15 || fall_back || die "task/affinity alone did not start either"
	elif [ "${HVD_CLUSTER_CGROUP:-0}" = 2 ]; then
		use_plugins affinity
		mv "$dir/plugins.new" "$dir/plugins"
		start_daemons 30 || die "the cluster did not start with task/affinity"
	else
		start_daemons 30 || die "the cluster did not start"
	fi
	echo "cluster up in $dir: node $host, ports $ctld_port/$slurmd_port"
}

# Slurm's cgroup v1 folders (slurm_HOST under each controller) once empty
# (v2 cannot be tried on the machine this was written on: it has v1);
# a folder still holding a task stays (rmdir refuses it).
remove_cgroups() {
	local c
	for c in /sys/fs/cgroup/*/"slurm_$host"; do
		[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

down() {
	[ -d "$dir" ] || return 0
	if [ -f "$dir/slurm.conf" ] && [ -f "$dir/run/slurmctld.pid" ]; then
		scancel --full --quiet --user=root 2>/dev/null
		scancel --full --quiet --state=PENDING 2>/dev/null
		for _ in $(seq 1 150); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			scancel --full --quiet 2>/dev/null
			sleep 0.1
		done
	fi
	stop_pidfile "$dir/run/slurmd.pid" slurmd
	stop_pidfile "$dir/run/slurmctld.pid" slurmctld
	stop_pidfile "$dir/munge/munged.pid" munged
	[ -f "$dir/cgroup.conf" ] && remove_cgroups
	if [ "${HVD_TEST_KEEP:-}" != 1 ]; then
		rm -rf "$dir"
	fi
	return 0
}

status() {
	sinfo -N -o '%N %t %c %z %G' && squeue
}

case "$verb" in
	up) up ;;
	down) down ;;
	status) status ;;
	*) die "unknown verb '$verb': use up, down or status" ;;
esac
