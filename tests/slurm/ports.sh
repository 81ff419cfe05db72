# ports.sh - sourced by cluster.sh and multinode.sh: pick_ports prints a
# free pair of TCP ports "P P+1" for a test cluster's slurmctld and
# slurmd. The pair lies below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range), where no outgoing connection of
# another process (srun, munge, a test's client) can take a port between
# this check and the daemon's bind; and no socket in any state holds
# either now. A machine whose ephemeral range starts below 12002 leaves
# no such room: the pair is then drawn from 20000-59999 as before.
# What it does not do: reserve the ports (a listener started after the
# check still wins the race).
pick_ports() {
	local p lo base=20000 span=20000
	read -r lo _ < /proc/sys/net/ipv4/ip_local_port_range 2> /dev/null || lo=0
	if [ "$lo" -ge 12002 ] 2> /dev/null; then
		base=10000 span=$(( (lo - 10000) / 2 ))
	fi
	for _ in $(seq 1 50); do
		p=$(( base + (RANDOM % span) * 2 ))
		if ! ss -Htan "sport = :$p" | grep -q . && ! ss -Htan "sport = :$((p + 1))" | grep -q .; then
			echo "$p $((p + 1))"
			return 0
		fi
	done
	return 1
}
