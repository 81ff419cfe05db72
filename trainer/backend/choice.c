/* backend/choice.c - the backend `--backend auto` picks (choice.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/choice.h"

/* The task was given GPUs: what it was given, else NULL. */
static const char *granted(const struct backend_env *env, char *buf, size_t len)
{
	if (env->busid && *env->busid)
		snprintf(buf, len, "HVD_GPU_BUSID=%s", env->busid);
	else if (env->visible && *env->visible)
		snprintf(buf, len, "CUDA_VISIBLE_DEVICES=%s", env->visible);
	else
		return NULL;
	return buf;
}

static void choose_auto(const struct backend_env *env, struct backend_choice *out)
{
	char given[128];
	if (env->has_gpu && env->devices > 0) {
		out->name = "gpu";
		snprintf(out->reason, sizeof(out->reason), "auto: %d CUDA device%s visible",
			 env->devices, env->devices == 1 ? "" : "s");
		return;
	}
	out->name = env->has_cpu ? "cpu" : "ref";
	const char *cause = !env->has_gpu ? "this chexnet was built without CUDA" : env->device_why;
	snprintf(out->reason, sizeof(out->reason), "auto: %s",
		 env->visible && !*env->visible ? "CUDA_VISIBLE_DEVICES is empty"
		 : !env->has_gpu ? "no GPU backend in this build" : "no usable CUDA device");
	if (granted(env, given, sizeof(given)))
		snprintf(out->warning, sizeof(out->warning), "warning: GPUs granted (%s) but none "
			 "usable: %s; training on the %s backend", given, cause, out->name);
}

int backend_choose(const char *requested, const struct backend_env *env,
		   struct backend_choice *out, struct trainer_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!strcmp(requested, "auto")) {
		choose_auto(env, out);
		return 0;
	}
	out->name = requested;
	if (!strcmp(requested, "gpu") && env->has_gpu && env->devices < 1)
		return trainer_error_set(err, "--backend: 'gpu': no usable CUDA device (%s); "
					 "--backend auto trains on the CPU", env->device_why);
	return 0;
}

int backend_resolve(const char *requested, struct backend_choice *out, struct trainer_error *err)
{
	struct trainer_error none = { "" };
	const struct backend_ops *gpu = backend_find("gpu", &none);
	char why[160] = "no CUDA device";
	struct backend_env env = {
		.has_gpu = gpu != NULL, .has_cpu = backend_find("cpu", &none) != NULL,
		.device_why = why, .busid = getenv("HVD_GPU_BUSID"),
		.visible = getenv("CUDA_VISIBLE_DEVICES"),
	};
	if (gpu && gpu->devices && (!strcmp(requested, "auto") || !strcmp(requested, "gpu")))
		env.devices = gpu->devices(why, sizeof(why));
	return backend_choose(requested, &env, out, err);
}

enum precision backend_precision_auto(const char *name, char *why, size_t len)
{
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = 1, .precision = PRECISION_BF16 };
	char what[96];
	const struct backend_ops *ops = backend_find(name, &err);
	if (ops && !strcmp(name, "gpu")) {
		snprintf(why, len, "auto: mixed precision on the GPU");
		return PRECISION_BF16;
	}
	if (strcmp(name, "cpu")) {
		snprintf(why, len, "auto: the ref backend computes in fp32");
		return PRECISION_FP32;
	}
	if (ops && ops->probe && !ops->probe(&opt, what, sizeof(what), &err)) {
		opt.native_only = 1;
		if (!ops->probe(&opt, what, sizeof(what), &err)) {
			snprintf(why, len, "auto: this CPU has native bf16");
			return PRECISION_BF16;
		}
		snprintf(why, len, "auto: bf16 only emulated on this CPU, slower than fp32");
		return PRECISION_FP32;
	}
	snprintf(why, len, "auto: no bf16 kernels on this CPU");
	return PRECISION_FP32;
}
