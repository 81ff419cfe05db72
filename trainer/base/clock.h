/* clock.h - the one monotonic clock of the trainer, in seconds (for
 * durations: waits, throughput, time limits). What this is not: wall-clock
 * time or the runtime's timeline clock (runtime/observe/timeline.h).
 */
#ifndef HVD_TRAINER_CLOCK_H
#define HVD_TRAINER_CLOCK_H

/* CLOCK_MONOTONIC in seconds. */
double now_seconds(void);

#endif
