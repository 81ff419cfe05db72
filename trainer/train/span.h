/* span.h - the training loop's phases (DATA_WAIT, FORWARD, BACKWARD,
 * ALLREDUCE_WAIT, OPTIMIZER) as spans on two lanes, "data" and
 * "compute": each goes to the runtime's timeline (dist.h, HVD_TIMELINE,
 * O3) and, when a GPU session installed them, to NVTX ranges of the same
 * name, so Nsight Systems shows the picture the timeline shows. Spans
 * nest or follow each other on the trainer thread (a range stack).
 * What this is not: the timeline file (runtime/observe/timeline.c) or NVTX
 * itself (gpu/gpu_nvtx.h).
 */
#ifndef HVD_TRAINER_SPAN_H
#define HVD_TRAINER_SPAN_H

#include "backend/hooks.h"

/* NULL: timeline only. The struct must outlive its use. */
void span_set_ranges(const struct span_ranges *r);
void span_begin(const char *lane, const char *name);
void span_end(const char *lane);

#endif
