/* core/clock.h - the runtime's one clock: monotonic seconds, for every
 * deadline and timeline stamp.
 * What this is not: wall-clock time (the timeline's epoch is its own).
 */
#ifndef HVD_CLOCK_H
#define HVD_CLOCK_H

double runtime_now(void);

#endif
