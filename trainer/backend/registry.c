/* backend.c - the one place that knows which backends this build has and
 * picks one by name. What it does not do: anything a backend does, or
 * precision names (precision.c).
 */
#include <stddef.h>
#include <string.h>

#include "backend/backend.h"

static const struct backend_ops *const backends[] = {
	&backend_ref_ops,
#ifdef HAVE_CPU_BACKEND
	&backend_cpu_ops,
#endif
#ifdef HAVE_GPU_BACKEND
	&backend_gpu_ops,
#endif
	NULL,
};

const char *backend_names(void)
{
	static char names[64];

	if (!names[0])
		for (int i = 0; backends[i]; i++) {
			if (i)
				strcat(names, " ");
			strcat(names, backends[i]->name);
		}
	return names;
}

const struct backend_ops *backend_find(const char *name, struct trainer_error *err)
{
	for (int i = 0; backends[i]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	if (strcmp(name, "cpu") == 0 || strcmp(name, "gpu") == 0)
		trainer_error_set(err, "--backend: '%s': not in this build (it has: %s)",
				  name, backend_names());
	else
		trainer_error_set(err, "--backend: '%s': unknown (this build has: %s)",
				  name, backend_names());
	return NULL;
}
