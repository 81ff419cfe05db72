/* gpu_launches.c - the gpu backend's call counters (gpu_launches.h).
 * What it does not do: decide what counts (the call sites do).
 */
#include "backend/gpu/gpu_launches.h"

static unsigned long counts[GPU_LAUNCH_KINDS], bn_computed, bn_normalised;

void gpu_launch_note(enum gpu_launch_kind k)
{
	if ((unsigned)k < GPU_LAUNCH_KINDS)
		__atomic_fetch_add(&counts[k], 1, __ATOMIC_RELAXED);
}

void gpu_launches_read(unsigned long out[GPU_LAUNCH_KINDS])
{
	for (int k = 0; k < GPU_LAUNCH_KINDS; k++)
		out[k] = __atomic_load_n(&counts[k], __ATOMIC_RELAXED);
}

void gpu_bn_channels_note(unsigned long computed, unsigned long normalised)
{
	__atomic_fetch_add(&bn_computed, computed, __ATOMIC_RELAXED);
	__atomic_fetch_add(&bn_normalised, normalised, __ATOMIC_RELAXED);
}

void gpu_bn_channels_read(unsigned long *computed, unsigned long *normalised)
{
	*computed = __atomic_load_n(&bn_computed, __ATOMIC_RELAXED);
	*normalised = __atomic_load_n(&bn_normalised, __ATOMIC_RELAXED);
}
