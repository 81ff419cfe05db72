/* backend_cpu.h - what the cpu backend offers beyond the ops table (tests,
 * bench): the list of primitives it made with their implementations, a
 * per-primitive time profile, the memory it holds and the layout moves it
 * ran. What this is not: the interface every backend has (backend.h).
 */
#ifndef HVD_TRAINER_CPU_BACKEND_CPU_H
#define HVD_TRAINER_CPU_BACKEND_CPU_H

#include <stddef.h>
#include <stdio.h>

struct backend;

/* Calls fn(what, impl) for every cached primitive; returns the count. */
int cpu_backend_primitives(struct backend *b,
			   void (*fn)(const char *what, const char *impl, void *user),
			   void *user);
/* Time every primitive call from now on (adds a stream wait per call). */
void cpu_backend_profile_start(struct backend *b);
/* Prints the primitives by total time, with the share of the sum and
 * grouped by kind; the forward/backward wall time is the caller's. */
void cpu_backend_profile_print(struct backend *b, FILE *f, int top);
/* Bytes held: persistent activations and the step arena. */
void cpu_backend_memory(struct backend *b, size_t *persist_bytes, size_t *arena_bytes);
/* Layout moves (copies or reorders between an op's descriptor and a
 * tensor's storage) run since create. */
long cpu_backend_moves(struct backend *b);

#endif
