#!/usr/bin/env bash
# attack.sh BUILD OUT MODE - one control-plane attack on a real 2-rank job
# of the private test cluster (SLURM_CONF), for tests/test_runtime_attack.c.
# The job runs as root (this script); the attacker is build/hvd-attack as
# `nobody` (runuser), on 127.0.0.1 only. Writes into OUT:
#   ref.out        an unattacked run's stdout (its checksum line), recorded
#                  with build/hvd-record.so preloaded (rank 1's handshake)
#   job.out/.err/.rc   the attacked run
#   attack.out/.rc     what the attacker saw (`refused: ...` when dropped)
# MODE: silent claim error replay flood hold (see runtime/tests/hvd_attack.c)
# or `leak`: while a job is paused after start-up, nobody (inside the
# job's mount namespace) reads every file of the cluster dir and /dev/shm
# looking for each 32-byte getrandom result of the job (the secret among
# them): scan.out/.rc.
# What it does not do: decide pass or fail (the C test does).
set -u
build=$1 out=$2 mode=$3
rt="$build/hvd-rt-test" atk="$build/hvd-attack"
mkdir -p "$out/rec" && chmod 755 "$out" && chmod 700 "$out/rec"
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
steps="steps 20 5"

wait_file() { for _ in $(seq 300); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
as_nobody() { runuser -u nobody -- "$@"; }

# the unattacked reference (and a handshake to replay)
HVD_RECORD_DIR="$out/rec" LD_PRELOAD="$build/hvd-record.so" \
	timeout 120 srun -n 2 "$rt" $steps > "$out/ref.out" 2> "$out/ref.err"
echo $? > "$out/ref.rc"

if [ "$mode" = leak ]; then
	touch "$out/hold.go"
	HVD_RECORD_DIR="$out/rec" LD_PRELOAD="$build/hvd-record.so" HVD_RT_TEST_HOLD="$out/hold" \
		HVD_RT_TEST_PAUSE="$out/pause" timeout 120 srun -n 2 "$rt" $steps \
		> "$out/job.out" 2> "$out/job.err" &
	job=$!
	wait_file "$out/pause.ready0" && wait_file "$out/pause.ready1"
	pid=$(cat "$out/hold.pid0")
	rc=0
	: > "$out/scan.out"
	for f in "$out"/rec/random.*; do
		while read -r hex; do
			nsenter -t "$pid" -m runuser -u nobody -- "$atk" scan "$hex" \
				"$(dirname "$SLURM_CONF")" /dev/shm >> "$out/scan.out" 2>&1 || rc=1
		done < "$f"
	done
	echo "$rc" > "$out/scan.rc"
	cat "$out"/rec/random.* | wc -l > "$out/scan.values"
	touch "$out/pause.go"
	wait "$job"
	echo $? > "$out/job.rc"
	exit 0
fi

cat "$out"/rec/handshake.* > "$out/replay.bin" 2> /dev/null
chmod 644 "$out/replay.bin"
# rank 1 starts at once but its connect() to rank 0's control port waits
# for conn.go (hvd-record.so): rank 0 is past the PMIx fence, in its
# start-up, with the attacker as the only one knocking
touch "$out/hold.go"
HVD_RT_TEST_HOLD="$out/hold" HVD_RECORD_HOLD="$out/conn" LD_PRELOAD="$build/hvd-record.so" \
	timeout 120 srun -n 2 "$rt" $steps > "$out/job.out" 2> "$out/job.err" &
job=$!
port=$("$atk" port "$out/hold.pid0")
echo "$port" > "$out/conn.port.tmp" && mv "$out/conn.port.tmp" "$out/conn.port"
arg=
[ "$mode" = replay ] && arg="$out/replay.bin"
[ "$mode" = hold ] && arg=300
as_nobody timeout 100 "$atk" "$mode" 127.0.0.1 "$port" $arg > "$out/attack.out" 2>&1 &
atk_pid=$!
for _ in $(seq 600); do
	grep -q '^sent' "$out/attack.out" 2> /dev/null && break
	kill -0 "$atk_pid" 2> /dev/null || break
	sleep 0.1
done
# rank 1 stays held until rank 0 has dropped the attacker, so on a loaded
# machine too the attack is handled during start-up, not after it (a
# silent attacker is dropped by its own 5 s handshake deadline)
for _ in $(seq 600); do
	grep -q 'failed authentication' "$out/job.err" 2> /dev/null && break
	kill -0 "$atk_pid" 2> /dev/null || break
	sleep 0.1
done
touch "$out/conn.go"
wait "$job"
echo $? > "$out/job.rc"
wait "$atk_pid"
echo $? > "$out/attack.rc"
