/* gpu_nvml.c - NVML loaded at run time with dlopen, so neither the build
 * nor a CPU-only machine needs it. Only the few entry points used are
 * declared here, with the types of nvml.h's stable v1/v2 ABI (structs
 * nvmlUtilization_t and nvmlMemory_t have not changed since NVML 1).
 * What it does not do: decide anything (gpu_health.c).
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "backend/gpu/gpu_health.h"

typedef int nvml_return;                 /* nvmlReturn_t; 0 = NVML_SUCCESS */
typedef struct nvml_device_st *nvml_device;  /* nvmlDevice_t */
struct nvml_utilization { unsigned int gpu, memory; };           /* nvmlUtilization_t */
struct nvml_memory { unsigned long long total, free, used; };    /* nvmlMemory_t */

struct gpu_nvml {
	void *lib;
	nvml_device dev;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*by_bus)(const char *, nvml_device *);
	nvml_return (*util)(nvml_device, struct nvml_utilization *);
	nvml_return (*mem)(nvml_device, struct nvml_memory *);
	const char *(*error_string)(nvml_return);
	int initialised;
};

static const char *nvml_error(struct gpu_nvml *n, nvml_return rc)
{
	return n->error_string ? n->error_string(rc) : "unknown NVML error";
}

/* dlsym into a typed function pointer (POSIX guarantees the conversion). */
static int resolve(struct gpu_nvml *n, void *fn_ptr, const char *name,
		   struct trainer_error *err)
{
	void *sym = dlsym(n->lib, name);

	if (!sym)
		return trainer_error_set(err, "gpu health: nvml: '%s': not found", name);
	*(void **)fn_ptr = sym;
	return 0;
}

struct gpu_nvml *gpu_nvml_open(const char *bus_id, struct trainer_error *err)
{
	struct gpu_nvml *n = calloc(1, sizeof(*n));
	nvml_return rc;

	if (!n) {
		trainer_error_set(err, "gpu health: out of memory");
		return NULL;
	}
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		trainer_error_set(err, "gpu health: 'libnvidia-ml.so.1': %s", dlerror());
		goto fail;
	}
	if (resolve(n, &n->init, "nvmlInit_v2", err) ||
	    resolve(n, &n->shutdown, "nvmlShutdown", err) ||
	    resolve(n, &n->by_bus, "nvmlDeviceGetHandleByPciBusId_v2", err) ||
	    resolve(n, &n->util, "nvmlDeviceGetUtilizationRates", err) ||
	    resolve(n, &n->mem, "nvmlDeviceGetMemoryInfo", err) ||
	    resolve(n, &n->error_string, "nvmlErrorString", err))
		goto fail;
	if ((rc = n->init()) != 0) {
		trainer_error_set(err, "gpu health: nvmlInit: %s", nvml_error(n, rc));
		goto fail;
	}
	n->initialised = 1;
	if ((rc = n->by_bus(bus_id, &n->dev)) != 0) {
		trainer_error_set(err, "gpu health: '%s': %s", bus_id, nvml_error(n, rc));
		goto fail;
	}
	return n;
fail:
	gpu_nvml_close(n);
	return NULL;
}

int gpu_nvml_sample(struct gpu_nvml *n, struct gpu_nvml_sample *s, struct trainer_error *err)
{
	struct nvml_utilization u;
	struct nvml_memory m;
	nvml_return rc;

	if ((rc = n->util(n->dev, &u)) != 0)
		return trainer_error_set(err, "gpu health: utilisation: %s", nvml_error(n, rc));
	if ((rc = n->mem(n->dev, &m)) != 0)
		return trainer_error_set(err, "gpu health: memory: %s", nvml_error(n, rc));
	s->util_percent = u.gpu;
	s->mem_used_bytes = m.used;
	s->mem_total_bytes = m.total;
	return 0;
}

void gpu_nvml_close(struct gpu_nvml *n)
{
	if (!n)
		return;
	if (n->initialised)
		n->shutdown();
	if (n->lib)
		dlclose(n->lib);
	free(n);
}
