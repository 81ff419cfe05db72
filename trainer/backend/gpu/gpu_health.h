/* gpu_health.h - GPU health for the start-up report and the end of the
 * run (O1, O2): per-rank utilisation and memory read through NVML, which
 * is loaded at run time with dlopen (libnvidia-ml.so.1) so the build needs
 * neither NVML headers nor the library; and the pure verdicts (two ranks
 * on one GPU, utilisation under 80%) that the unit tests reach on the CPU
 * (tests/test_gpu_pure.c). What this is not: gathering other ranks'
 * bus ids (the runtime does that and passes them in).
 */
#ifndef HVD_TRAINER_GPU_HEALTH_H
#define HVD_TRAINER_GPU_HEALTH_H

#include <stddef.h>

#include "base/error.h"

#define GPU_BUS_ID_LEN 32       /* "0000:3b:00.0" and NUL, with room */
#define GPU_UTIL_WARN_PERCENT 80

/* How many of the other ranks (bus_ids[0..ranks), skipping `self`) use
 * the same GPU as rank self; case-insensitive, domain prefix optional. */
int gpu_health_sharing(const char (*bus_ids)[GPU_BUS_ID_LEN], int ranks, int self);

struct gpu_util_summary {
	int samples;
	double mean_percent;       /* mean GPU utilisation over the samples */
	double below_fraction;     /* fraction of samples under the threshold */
	int warn;                  /* mean under GPU_UTIL_WARN_PERCENT (O1) */
};
void gpu_health_summarise(const unsigned *util_percent, int samples,
			  struct gpu_util_summary *s);
/* One-line warnings (empty string when none), without the "chexnet: " prefix. */
void gpu_health_sharing_message(int sharing, const char *bus_id, char *msg, size_t len);
void gpu_health_util_message(const struct gpu_util_summary *s, const char *bus_id,
			     char *msg, size_t len);

/* --- NVML through dlopen (gpu_nvml.c) --- */
struct gpu_nvml;  /* the loaded library and our device's handle */
struct gpu_nvml_sample {
	unsigned util_percent;     /* GPU busy, last sample period */
	unsigned long long mem_used_bytes, mem_total_bytes;
};
/* NULL + err when libnvidia-ml.so.1 or the device is missing (the caller
 * reports it once and runs without health data). */
struct gpu_nvml *gpu_nvml_open(const char *bus_id, struct trainer_error *err);
int gpu_nvml_sample(struct gpu_nvml *n, struct gpu_nvml_sample *s, struct trainer_error *err);
void gpu_nvml_close(struct gpu_nvml *n);

#endif
