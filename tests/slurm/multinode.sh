#!/usr/bin/env bash
# multinode.sh up DIR BUILD [N] | down DIR | exec DIR NODE CMD... |
#              cut DIR NODE | restore DIR NODE | fail DIR NODE |
#              revive DIR NODE | status DIR
#
# A Slurm cluster of N nodes (default 4) on this one machine: slurmctld and
# munged in the root namespace, one slurmd per node in its own network, UTS
# (hostname nK; n4's is h4, a NodeName that is not its hostname) and mount
# namespace (private sysfs and /dev/shm), joined by a bridge on a private
# /24 taken from 198.18.0.0/15 (the benchmarking range, RFC 2544). Every
# node also has a docker0 with 172.17.0.1/16, as Docker hosts do. Isolated like cluster.sh: its own slurm.conf, munge key and
# socket, ports, fake GPU device nodes, everything under DIR. Interface,
# bridge and namespace names carry a random id and `up` refuses to start if
# any of them, or the subnet, already exists. `down` leaves no namespace,
# veth, bridge, mount, daemon or /dev/shm file behind, whatever state the
# tests left. `fail` is a node that dies: its link goes down first (the
# others get no FIN or RST, as from a powered-off machine), then slurmd,
# slurmstepd and every task in its namespace get SIGKILL. `revive` starts
# its slurmd again and returns it to service (down first when a finished
# job still holds it).
# What it does not do: cgroup plugins (task/none, proctrack/linuxproc).
set -u
. "$(dirname "$0")/detach.sh"
. "$(dirname "$0")/ports.sh"
here=$(cd "$(dirname "$0")" && pwd)
verb=${1:?usage: multinode.sh up|down|exec|cut|restore|fail|revive|status DIR ...}
dir=${2:?usage: multinode.sh VERB DIR ...}
export SLURM_CONF="$dir/slurm.conf"
host=$(hostname -s)

die() { echo "hvd: multinode: $*" >&2; exit 1; }

load_env() {
	[ -f "$dir/net.env" ] || return 1
	# shellcheck disable=SC1091
	. "$dir/net.env"
}

node_veth() { echo "hvv${id}${1}"; }      # host end, <= 15 chars
node_ns() { echo "hvd-${id}-${1}"; }
# The node's hostname: its NodeName, except n4's (h4), a node named apart
# from its host as some sites do (chexnet names hosts by gethostname()).
node_host() { if [ "$1" = n4 ]; then echo h4; else echo "$1"; fi; }

pick_names() {
	local tries x
	for tries in $(seq 1 40); do
		id=$(printf '%04x' $((RANDOM % 65536)))
		x=$((18 + RANDOM % 2)).$((RANDOM % 256))
		subnet="198.$x"
		ip link show "hvb$id" > /dev/null 2>&1 && continue
		ip netns list 2>/dev/null | grep -q "^hvd-$id-" && continue
		ip -o addr show | grep -q " $subnet\." && continue
		ip route show | grep -q "^$subnet\." && continue
		bridge="hvb$id"
		return 0
	done
	return 1
}


refuse_existing() {
	ip link show "$bridge" > /dev/null 2>&1 && die "bridge '$bridge' exists: refusing to start"
	for i in $(seq 1 "$nodes"); do
		ip link show "$(node_veth n$i)" > /dev/null 2>&1 && die "interface '$(node_veth n$i)' exists: refusing to start"
		[ -e "/run/netns/$(node_ns n$i)" ] && die "namespace '$(node_ns n$i)' exists: refusing to start"
	done
	return 0
}

# A bridge like docker0 with containers on it, made before the node's
# own interface (it comes first in every list), one container's veth on
# it: the same address on every node, carrier up. A rank that offers or
# dials 172.17.0.1 reaches itself.
docker_like() {
	ip -n "$1" link add docker0 type bridge forward_delay 0 || die "cannot create docker0 in '$1'"
	ip -n "$1" link add hvdock0 type veth peer name hvdock1 || die "cannot create a container veth in '$1'"
	ip -n "$1" link set hvdock0 master docker0
	ip -n "$1" link set hvdock0 up
	ip -n "$1" link set hvdock1 up
	ip -n "$1" addr add 172.17.0.1/16 dev docker0
	ip -n "$1" link set docker0 up
}

net_up() {
	ip link add "$bridge" type bridge || die "cannot create bridge '$bridge'"
	ip link set "$bridge" type bridge stp_state 0 forward_delay 0
	ip addr add "$subnet.1/24" dev "$bridge"
	ip link set "$bridge" up
	for i in $(seq 1 "$nodes"); do
		local ns veth
		ns=$(node_ns n$i); veth=$(node_veth n$i)
		ip netns add "$ns" || die "cannot create namespace '$ns'"
		docker_like "$ns"
		ip link add "$veth" type veth peer name hvdeth0 netns "$ns" || die "cannot create veth '$veth'"
		ip link set "$veth" master "$bridge"
		ip link set "$veth" up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "$subnet.$((10 + i))/24" dev hvdeth0
		ip -n "$ns" link set hvdeth0 up
	done
}

render_conf() {
	local i
	sed -e "s|@DIR@|$dir|g" -e "s|@HOST@|$host|g" -e "s|@CTLD_ADDR@|$subnet.1|g" \
	    -e "s|@CTLD_PORT@|$ctld_port|g" -e "s|@SLURMD_PORT@|$slurmd_port|g" \
	    "$here/multinode.conf.in" > "$dir/slurm.conf"
	for i in $(seq 1 "$nodes"); do
		echo "NodeName=n$i NodeHostname=$(node_host n$i) NodeAddr=$subnet.$((10 + i)) CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:2 State=UNKNOWN" >> "$dir/slurm.conf"
	done
	echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$dir/slurm.conf"
	printf 'AutoDetect=off\nName=gpu File=%s/dev/nvidia[0-1]\n' "$dir" > "$dir/gres.conf"
}

start_munge() {
	mkdir -p "$dir/munge" && chmod 755 "$dir/munge"
	dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
	chown munge:munge "$dir/munge" "$dir/munge/munge.key"
	chmod 400 "$dir/munge/munge.key"
	detached "$dir/munge/munged.out" runuser -u munge -- munged --force --socket="$dir/munge/munge.sock" \
		--key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
		|| die "munged did not start (see $dir/munge/munged.log)"
}

# slurmd in the node's netns, with its own hostname, sysfs and /dev/shm;
# nsenter, not `ip netns exec` (that remount hides the cgroup v1 tmpfs).
start_slurmd() {
	local n=$1 cg="$dir/cgmnt/$1"
	mkdir -p "$cg" "$dir/tmp/$n"
	HVD_CG="$cg" detached "$dir/log/slurmd.$n.out" nsenter --net="/run/netns/$(node_ns "$n")" unshare --uts --mount --propagation slave -- \
		/bin/sh -c 'hostname "$0" && mount --rbind /sys/fs/cgroup "$HVD_CG" && mount -t sysfs sysfs /sys &&
			mount --move "$HVD_CG" /sys/fs/cgroup && mount -t tmpfs -o mode=1777 tmpfs /dev/shm || exit 1
			exec "$@"' "$(node_host "$n")" slurmd -f "$dir/slurm.conf" -N "$n" \
		|| die "slurmd $n did not start (see $dir/log/slurmd.$n.log)"
}

wait_idle() {
	local idle
	for _ in $(seq 1 300); do
		idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
		[ "$idle" -ge "$nodes" ] && return 0
		sleep 0.1
	done
	die "only $idle of $nodes nodes idle after 30 s (logs in $dir/log)"
}

up() {
	local build=${1:?usage: multinode.sh up DIR BUILD [N]}
	build=$(cd "$build" 2>/dev/null && pwd) || die "build dir '$1': not found"
	nodes=${2:-4}
	[ "$(id -u)" = 0 ] || die "needs root"
	[ -e "$dir/net.env" ] && die "a cluster already uses '$dir'"
	case "$nodes" in ''|*[!0-9]*) die "node count '$nodes': not a number" ;; esac
	[ "$nodes" -ge 1 ] && [ "$nodes" -le 200 ] || die "node count '$nodes': must be 1..200"
	pick_names || die "no free interface names / subnet found"
	refuse_existing
	read -r ctld_port slurmd_port < <(pick_ports) || die "no free port pair"
	mkdir -p "$dir"/{state,spool,run,log,dev,tmp,cgmnt}
	chmod 755 "$dir" "$dir/spool" "$dir/tmp"
	printf 'id=%s\nbridge=%s\nsubnet=%s\nnodes=%s\n' "$id" "$bridge" "$subnet" "$nodes" > "$dir/net.env"
	for i in 0 1; do mknod "$dir/dev/nvidia$i" c 195 "$i"; done
	render_conf
	if [ -f "$build/hvd.so" ]; then echo "required $build/hvd.so" > "$dir/plugstack.conf"; else : > "$dir/plugstack.conf"; fi
	net_up
	start_munge
	detached "$dir/log/slurmctld.out" slurmctld -c -f "$dir/slurm.conf" || die "slurmctld did not start (see $dir/log/slurmctld.log)"
	for i in $(seq 1 "$nodes"); do start_slurmd "n$i"; done
	wait_idle
	echo "multi-node cluster up in $dir: $nodes nodes on $subnet.0/24 (bridge $bridge)"
}

stop_pid() {   # stop_pid PID NAME
	local pid=$1
	[ -n "$pid" ] && alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do alive "$pid" || return 0; sleep 0.1; done
	echo "hvd: multinode: $2 (pid $pid) ignored TERM for 10 s: killing" >&2
	kill -KILL "$pid" 2>/dev/null
}

down() {
	[ -d "$dir" ] || return 0
	load_env || { rm -rf "$dir"; return 0; }
	if [ -f "$dir/slurm.conf" ]; then
		scancel --full --quiet 2>/dev/null
		for _ in $(seq 1 100); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	local f pids=
	for f in "$dir"/run/slurmd.*.pid; do [ -f "$f" ] && pids="$pids $(cat "$f")"; done
	for p in $pids; do stop_pid "$p" slurmd & done
	wait
	stop_pid "$(cat "$dir/run/slurmctld.pid" 2>/dev/null)" slurmctld
	stop_pid "$(cat "$dir/munge/munged.pid" 2>/dev/null)" munged
	for i in $(seq 1 "$nodes"); do
		local ns
		ns=$(node_ns n$i)
		[ -e "/run/netns/$ns" ] || continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip link del "$(node_veth n$i)" 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	ip link del "$bridge" 2>/dev/null
	if [ -d /run/netns ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
		umount /run/netns 2>/dev/null && rmdir /run/netns 2>/dev/null
	fi
	[ "${HVD_TEST_KEEP:-}" = 1 ] || rm -rf "$dir"
	return 0
}

node_pid() { cat "$dir/run/slurmd.$1.pid" 2>/dev/null; }

case "$verb" in
	up) shift 2; up "$@" ;;
	down) down ;;
	exec)
		load_env || die "no cluster in '$dir'"
		node=${3:?usage: multinode.sh exec DIR NODE CMD...}; shift 3
		pid=$(node_pid "$node") || die "node '$node': no slurmd pid"
		exec nsenter -t "$pid" -n -u -m -- "$@" ;;
	cut|restore)
		load_env || die "no cluster in '$dir'"
		node=${3:?usage: multinode.sh cut|restore DIR NODE}
		state=$([ "$verb" = cut ] && echo down || echo up)
		ip link set "$(node_veth "$node")" "$state" || die "node '$node': no such link" ;;
	fail)
		load_env || die "no cluster in '$dir'"
		node=${3:?usage: multinode.sh fail DIR NODE}
		ip link set "$(node_veth "$node")" down || die "node '$node': no such link"
		for p in $(ip netns pids "$(node_ns "$node")"); do kill -KILL "$p" 2>/dev/null; done ;;
	revive)
		load_env || die "no cluster in '$dir'"
		node=${3:?usage: multinode.sh revive DIR NODE}
		ip link set "$(node_veth "$node")" up || die "node '$node': no such link"
		# A job that ended while the node was gone can hold it (completing,
		# or mixed with no CPU in use) until slurmctld retries the job's end
		# (about 20 s here); taken down while no live job holds it, the
		# node drops what it held at once.
		if [ "$(sinfo -h -N -n "$node" -o %T)" != idle ] &&
		   [ -z "$(squeue -h -w "$node" -t CF,R,S -o %i)" ]; then
			scontrol update nodename="$node" state=down reason="hvd test: revived"
		fi
		[ -n "$(ip netns pids "$(node_ns "$node")")" ] || start_slurmd "$node"
		for _ in $(seq 1 100); do
			st=$(sinfo -h -N -n "$node" -o %T)
			[ "$st" = idle ] && exit 0
			case "$st" in down*|drain*) scontrol update nodename="$node" state=resume ;; esac
			sleep 0.2
		done
		die "node '$node' not idle 20 s after its revival" ;;
	status) load_env && sinfo -N -o '%N %t %c %z %G' && squeue ;;
	*) die "unknown verb '$verb'" ;;
esac
