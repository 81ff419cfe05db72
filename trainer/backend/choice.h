/* backend/choice.h - `--backend auto` (the default): gpu when this build
 * has CUDA and the task can use a device (after CUDA_VISIBLE_DEVICES),
 * else cpu, else ref; the reason for the start-up line, and one warning
 * when the task was granted GPUs (the plugin's HVD_GPU_BUSID, or a
 * non-empty CUDA_VISIBLE_DEVICES) that it cannot use. An explicit
 * `--backend gpu` with no usable device is an error.
 * What this is not: building a backend (backend_find, create).
 */
#ifndef HVD_TRAINER_BACKEND_CHOICE_H
#define HVD_TRAINER_BACKEND_CHOICE_H

#include <stddef.h>

#include "base/error.h"

/* What the choice looks at. */
struct backend_env {
	int has_gpu, has_cpu;    /* backends in this build */
	int devices;             /* usable CUDA devices (has_gpu) */
	const char *device_why;  /* why none, when devices is 0 */
	const char *busid;       /* HVD_GPU_BUSID, or NULL */
	const char *visible;     /* CUDA_VISIBLE_DEVICES, or NULL */
};

struct backend_choice {
	const char *name;        /* "gpu", "cpu" or "ref" */
	char reason[96];         /* "auto: 1 CUDA device visible"; "" when asked by name */
	char warning[384];       /* "" or one line without "chexnet: " */
	char precision_why[96];  /* --precision auto: why it resolved as it did */
};

/* Pure: requested "auto" or a backend's name. 0, or -1 with err (an
 * explicit gpu that cannot run here). */
int backend_choose(const char *requested, const struct backend_env *env,
		   struct backend_choice *out, struct trainer_error *err);
/* backend_choose on this process: the build's backends, the gpu
 * backend's device count, the environment. */
int backend_resolve(const char *requested, struct backend_choice *out, struct trainer_error *err);
/* --precision auto on backend `name`: bf16 on the gpu backend and where
 * the cpu backend's probe takes bf16 as native (avx512_core_bf16, AMX;
 * not avx512_core, which only emulates it), else fp32; why says which. */
enum precision backend_precision_auto(const char *name, char *why, size_t len);

#endif
