#!/bin/sh
# env_launch.sh - start processes the way a Kubernetes Indexed Job starts
# its pods: each one gets only JOB_COMPLETION_INDEX, HVD_SIZE,
# HVD_COORDINATOR and HVD_SECRET_FILE (no PMIx, no Slurm), in the current
# directory. Used by tests/test_env_launch.c; loopback addresses only.
#   env_launch.sh SIZE HOST:PORT CMD [ARGS...]
# Process K (0-based start order) writes out.K and err.K; at the end one
# line per process: `rcK=STATUS ms=MS` (MS since the signal, else since
# the start). Knobs (environment):
#   EL_INDEXES="0 1 1"   indexes to start (default 0 .. SIZE-1)
#   EL_SECRET=FILE       the secret file (default: secret)
#   EL_ENV_K="A=b"       extra environment of process K
#   EL_DELAY_K=S         start process K S seconds after the one before
#   EL_SIGNAL=SIG EL_TARGET=K   once out.K has a line `pid P ...`, send SIG
#                        to P; a stopped process is killed after the others
#   EL_WAIT_FOR=TEXT     instead: once err.0 contains TEXT, send SIG to
#                        process K itself (the command must exec)
#   EL_LINGER=K          process K is not waited for (a rank that stopped
#                        submitting sleeps on): killed once the others end
# What it does not do: check results (the test does).
set -u
size=$1 coord=$2
shift 2
indexes=${EL_INDEXES:-$(seq 0 $((size - 1)))}
k=0
pids=
for i in $indexes; do
	eval extra=\${EL_ENV_$k:-} delay=\${EL_DELAY_$k:-}
	[ -n "$delay" ] && sleep "$delay"
	env -u PMIX_NAMESPACE -u PMIX_RANK -u SLURM_JOB_ID -u SLURM_STEP_ID -u SLURM_NTASKS \
		-u SLURM_STEP_NUM_TASKS -u SLURM_PROCID -u HVD_RANK \
		JOB_COMPLETION_INDEX=$i HVD_SIZE=$size HVD_COORDINATOR=$coord \
		HVD_SECRET_FILE=${EL_SECRET:-secret} $extra "$@" > out.$k 2> err.$k &
	pids="$pids $!"
	k=$((k + 1))
done
now_ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(now_ms)
victim=
if [ -n "${EL_SIGNAL:-}" ]; then
	for _ in $(seq 2400); do
		if [ -n "${EL_WAIT_FOR:-}" ]; then
			grep -qF -- "$EL_WAIT_FOR" err.0 2>/dev/null &&
				victim=$(echo $pids | cut -d' ' -f$((EL_TARGET + 1)))
		else
			victim=$(awk '$1 == "pid" { print $2; exit }' out.${EL_TARGET} 2>/dev/null)
		fi
		[ -n "$victim" ] && break
		sleep 0.05
	done
	t0=$(now_ms)
	kill -"$EL_SIGNAL" "$victim"
fi
k=0
linger=
for p in $pids; do
	if [ "$k" = "${EL_TARGET:-x}" ] && [ "${EL_SIGNAL:-}" = STOP ]; then
		linger=$victim
	elif [ "$k" = "${EL_LINGER:-x}" ]; then
		linger=$p
	else
		wait $p
		echo "rc$k=$? ms=$(($(now_ms) - t0))"
	fi
	k=$((k + 1))
done
if [ -n "$linger" ]; then
	kill -KILL "$linger"
	kill -CONT "$linger"
	wait
fi
exit 0
