/* loop/train_health.h - pure helpers for the GPU health part of the
 * start-up and end reports (O1, O2), unit-tested on the CPU
 * (trainer-dist): short texts carried through the float allgather the
 * runtime offers (one char per float, exact for 0..255), and the
 * shared-GPU count over every rank's (host, PCI bus id) pair, since bus
 * ids repeat across identical nodes and only a match on the same host is
 * a shared GPU.
 * What this is not: NVML or the exchange itself (loop/train_device.c).
 */
#ifndef HVD_TRAINER_RUN_TRAIN_HEALTH_H
#define HVD_TRAINER_RUN_TRAIN_HEALTH_H

#include <stddef.h>

#include "backend/gpu/gpu_health.h"

#define TRAIN_HEALTH_TEXT 256   /* floats per rank in a text exchange */
#define TRAIN_HEALTH_HOST 64

/* text (truncated to n-1 chars) -> n floats, zero padded. */
void train_health_pack(const char *text, float *out, size_t n);
/* n floats -> text (NUL-terminated, at most n-1 chars; stops at 0 or a
 * value that is not a byte). */
void train_health_unpack(const float *in, size_t n, char *text);
/* How many other ranks use rank self's GPU: same host and same bus id
 * (gpu_health_sharing's comparison: case, domain prefix). */
int train_health_shared(const char (*hosts)[TRAIN_HEALTH_HOST], const char (*bus_ids)[GPU_BUS_ID_LEN],
			int ranks, int self);

#endif
