/* stop_signal.h - preemption and time limits: SIGTERM (scancel, preemption),
 * SIGUSR1 (`sbatch --signal=USR1@SECONDS`) and, for train, the first
 * SIGINT (Ctrl-C) only set a flag; the
 * training loop agrees on it across ranks at the next step boundary,
 * writes a checkpoint and exits with CHEXNET_EXIT_PREEMPTED.
 * What this is not: the agreement (a per-step allreduce in loop/train.c).
 */
#ifndef HVD_TRAINER_STOP_SIGNAL_H
#define HVD_TRAINER_STOP_SIGNAL_H

/* EX_TEMPFAIL (sysexits.h): "try again later", i.e. resume. */
#define CHEXNET_EXIT_PREEMPTED 75

/* Installs the handlers (SA_RESTART) and blocks the signals in the
 * calling thread, so threads started afterwards (runtime, loader) never
 * see them (a signal would interrupt their poll()). interrupt: SIGINT
 * (Ctrl-C, or srun passing it on) is a stop request too, and a SIGINT
 * after any stop request exits 130 at once (a line on stderr, no
 * checkpoint); an ignored SIGINT (a shell's background job) stays
 * ignored. 0 or -1. */
int stop_signal_install(int interrupt);
/* Blocks them again in the calling thread (the next session of a run,
 * before its threads start); handlers and a signal already received stay,
 * and one that comes now waits for stop_signal_listen. */
void stop_signal_hold(void);
/* Unblocks them in the calling thread (the training loop's, after every
 * helper thread exists); a signal that came meanwhile is delivered now. */
void stop_signal_listen(void);
/* The signal received (SIGTERM, SIGUSR1 or SIGINT), or 0. */
int stop_signal_received(void);
/* Restores the default dispositions (and unblocks). */
void stop_signal_uninstall(void);

#endif
