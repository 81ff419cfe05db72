/* timeline.h - Chrome trace of what the runtime and the trainer do
 * (Horovod's timeline, practice O3): one row ("process") per tensor or per
 * trainer lane, B/E spans for phases (NEGOTIATE_ALLREDUCE, QUEUE,
 * MEMCPY_IN_FUSION_BUFFER, MPI_ALLREDUCE, MEMCPY_OUT_FUSION_BUFFER, ...),
 * X ticks for each rank's arrival. The file is valid JSON after every
 * event (opens in Perfetto / chrome://tracing even if the job dies).
 * Thread-safe; every function is a no-op on a NULL timeline.
 * What it does not do: decide what to record (engine.c, control.c, api).
 */
#ifndef HVD_TIMELINE_H
#define HVD_TIMELINE_H

#include <stddef.h>

struct timeline;

int timeline_open(struct timeline **t, const char *path, char *err, size_t errlen);
void timeline_close(struct timeline *t);
void timeline_begin(struct timeline *t, const char *lane, const char *phase);
/* args_json: NULL or the inside of a JSON object, e.g. "\"dtype\": \"float32\"". */
void timeline_end(struct timeline *t, const char *lane, const char *args_json);
void timeline_tick(struct timeline *t, const char *lane, const char *name);

#endif
