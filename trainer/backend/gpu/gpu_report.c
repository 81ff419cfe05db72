/* gpu_report.c - the GPU backend's health lines for the start-up report
 * and the end of the run (O1, O2): one NVML sample per call (NVML opened
 * with dlopen on first use, gpu_nvml.c), samples kept in a fixed array
 * for the utilisation verdict (gpu_health.c). What it does not do: print
 * (the trainer does), or compare ranks (needs every rank's bus id).
 */
#include <stdio.h>
#include <string.h>

#include "backend/gpu/gpu_backend.h"
#include "backend/gpu/gpu_internal.h"

int gpu_backend_health_sample(struct backend *b, char *line, size_t len,
			      struct trainer_error *err)
{
	struct gpu_nvml_sample s;

	if (!b->nvml) {
		if (b->nvml_failed)
			return trainer_error_set(err, "gpu health: '%s': NVML unavailable", b->bus_id);
		b->nvml = gpu_nvml_open(b->bus_id, err);
		if (!b->nvml) {
			b->nvml_failed = 1;
			return -1;
		}
	}
	if (gpu_nvml_sample(b->nvml, &s, err))
		return -1;
	if (b->util_count == GPU_HEALTH_SAMPLES) {
		memmove(b->util_samples, b->util_samples + 1,
			(GPU_HEALTH_SAMPLES - 1) * sizeof(b->util_samples[0]));
		b->util_count--;
	}
	b->util_samples[b->util_count++] = s.util_percent;
	snprintf(line, len, "gpu %s: utilisation %u%%, memory %llu/%llu MiB", b->bus_id,
		 s.util_percent, s.mem_used_bytes >> 20, s.mem_total_bytes >> 20);
	return 0;
}

void gpu_backend_health_summary(const struct backend *b, char *msg, size_t len)
{
	struct gpu_util_summary s;

	gpu_health_summarise(b->util_samples, b->util_count, &s);
	gpu_health_util_message(&s, b->bus_id, msg, len);
}
