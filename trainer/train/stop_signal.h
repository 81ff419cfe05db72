/* stop_signal.h - preemption and time limits: SIGTERM (scancel, preemption)
 * and SIGUSR1 (`sbatch --signal=USR1@SECONDS`) only set a flag; the
 * training loop agrees on it across ranks at the next step boundary,
 * writes a checkpoint and exits with CHEXNET_EXIT_PREEMPTED.
 * What this is not: the agreement (a per-step allreduce in loop/train.c).
 */
#ifndef HVD_TRAINER_STOP_SIGNAL_H
#define HVD_TRAINER_STOP_SIGNAL_H

/* EX_TEMPFAIL (sysexits.h): "try again later", i.e. resume. */
#define CHEXNET_EXIT_PREEMPTED 75

/* Installs the handlers (SA_RESTART) and blocks both signals in the
 * calling thread, so threads started afterwards (runtime, loader) never
 * see them (a signal would interrupt their poll()). 0 or -1. */
int stop_signal_install(void);
/* Unblocks them in the calling thread (the training loop's, after every
 * helper thread exists); a signal that came meanwhile is delivered now. */
void stop_signal_listen(void);
/* The signal received (SIGTERM or SIGUSR1), or 0. */
int stop_signal_received(void);
/* Restores the default dispositions (and unblocks). */
void stop_signal_uninstall(void);

#endif
