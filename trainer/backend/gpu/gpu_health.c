/* gpu_health.c - the pure GPU-health verdicts (see gpu_health.h): shared
 * GPU detection from PCI bus ids and the utilisation summary (O1, O2).
 * What it does not do: read NVML (gpu_nvml.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "backend/gpu/gpu_health.h"

/* "0000:3B:00.0" and "3b:00.0" name the same device: drop the domain
 * when it is 0 and compare case-insensitively. */
static const char *skip_zero_domain(const char *id)
{
	const char *colon = strchr(id, ':');

	if (colon && strchr(colon + 1, ':') && strspn(id, "0") == (size_t)(colon - id))
		return colon + 1;
	return id;
}

static int same_bus(const char *a, const char *b)
{
	a = skip_zero_domain(a);
	b = skip_zero_domain(b);
	while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b))
		a++, b++;
	return *a == *b;
}

int gpu_health_sharing(const char (*bus_ids)[GPU_BUS_ID_LEN], int ranks, int self)
{
	int sharing = 0;

	for (int r = 0; r < ranks; r++)
		if (r != self && bus_ids[r][0] && same_bus(bus_ids[r], bus_ids[self]))
			sharing++;
	return sharing;
}

void gpu_health_summarise(const unsigned *util_percent, int samples,
			  struct gpu_util_summary *s)
{
	double sum = 0.0;
	int below = 0;

	*s = (struct gpu_util_summary){ .samples = samples };
	if (samples < 1)
		return;
	for (int i = 0; i < samples; i++) {
		sum += util_percent[i];
		below += util_percent[i] < GPU_UTIL_WARN_PERCENT;
	}
	s->mean_percent = sum / samples;
	s->below_fraction = (double)below / samples;
	s->warn = s->mean_percent < GPU_UTIL_WARN_PERCENT;
}

void gpu_health_sharing_message(int sharing, const char *bus_id, char *msg, size_t len)
{
	if (sharing < 1)
		snprintf(msg, len, "%s", "");
	else
		snprintf(msg, len, "warning: gpu: '%s': shared with %d other rank%s on this node "
			 "(O2): hint: request one GPU per task (--gpus-per-task=1)",
			 bus_id, sharing, sharing == 1 ? "" : "s");
}

void gpu_health_util_message(const struct gpu_util_summary *s, const char *bus_id,
			     char *msg, size_t len)
{
	if (!s->warn)
		snprintf(msg, len, "%s", "");
	else
		snprintf(msg, len, "warning: gpu: '%s': utilisation %.0f%% on average over %d "
			 "samples (%.0f%% of them under %d%%): the GPU waits (O1; see the "
			 "timeline for input or communication stalls)", bus_id, s->mean_percent,
			 s->samples, 100.0 * s->below_fraction, GPU_UTIL_WARN_PERCENT);
}
