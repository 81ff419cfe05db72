/* loop/algo_share.c - the cache folder and rank 0's broadcast of the
 * gpu backend's timed convolution algorithms (algo_share.h). The bytes
 * travel one per float, as run_name.c sends a name (exact in fp32). On
 * the NCCL runtime the backend is still being created, so the staging
 * buffer is opened on it for this one broadcast and closed again.
 * What it does not do: choose or cache anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_train.h"
#include "loop/algo_share.h"
#include "train/dist.h"

const char *algo_cache_dir(void)
{
	static char dir[4096];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/chexnet", xdg);
	else if (home && home[0] == '/')
		n = snprintf(dir, sizeof(dir), "%s/.cache/chexnet", home);
	else
		return NULL;
	return n > 0 && (size_t)n < sizeof(dir) ? dir : NULL;
}

static int staged_broadcast(struct backend *b, float *wire, size_t len)
{
	struct trainer_error err = { "" };
	struct gpu_staging *g = NULL;
	int rc;

	if (dist_device_buffers()) {
		if (!(g = gpu_staging_open(b, &err))) {
			fprintf(stderr, "chexnet: %s\n", err.msg);
			return -1;
		}
		dist_set_staging(gpu_staging_hooks(g));
	}
	rc = dist_broadcast("conv.algorithms", wire, len, 0);
	if (g) {
		dist_set_staging(NULL);
		gpu_staging_close(g);
	}
	if (rc)
		fprintf(stderr, "%s\n", dist_error());
	return rc;
}

static int broadcast(void *ctx, struct backend *b, void *bytes, size_t len)
{
	unsigned char *p = bytes;
	float *wire = malloc((len ? len : 1) * sizeof(float));
	(void)ctx;

	if (!wire) {
		fprintf(stderr, "chexnet: conv algorithms: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		wire[i] = dist_rank() == 0 ? p[i] : 0.0f;
	int rc = staged_broadcast(b, wire, len);
	for (size_t i = 0; rc == 0 && i < len; i++)
		p[i] = (unsigned char)wire[i];
	free(wire);
	return rc;
}

struct backend_share algo_share(void)
{
	return (struct backend_share){ .rank = dist_rank(),
				       .broadcast = dist_size() > 1 ? broadcast : NULL };
}
