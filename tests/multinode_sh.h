/* multinode_sh.h - shell pieces the multi-node cases share, as parts of
 * snprintf formats (hence %%). MN_IDLE_SH defines idle (how many nodes
 * are plainly idle: not idle+completing, which `sinfo -t idle` also
 * lists), n (how many nodes there are) and `wait_idle TENTHS` (waits for
 * every node to be idle, at most TENTHS x 0.1 s). MN_LATE_JOB names a
 * job so that MN_CANCEL_LATE_SH can cancel it when it never reached the
 * point a case waits for, printing not_started=1, sinfo and squeue.
 * What this is not: a test; the cases judge what these print.
 */
#ifndef HVD_TESTS_MULTINODE_SH_H
#define HVD_TESTS_MULTINODE_SH_H

#define MN_IDLE_SH "idle() { sinfo -h -N -o %%N:%%T | sort -u | grep -c ':idle$'; }; " \
	"n=$(sinfo -h -N -o %%N | sort -u | wc -l); " \
	"wait_idle() { for i in $(seq $1); do [ \"$(idle)\" = \"$n\" ] && break; sleep 0.1; done; }; "
#define MN_LATE_JOB "-J hvd-late-$$"
#define MN_CANCEL_LATE_SH "echo not_started=1; sinfo -N; squeue; scancel -n hvd-late-$$; "

#endif
