/* gpu_train_none.c - gpu_train.h in builds without the CUDA backend: the
 * trainer links the same calls everywhere and never reaches these,
 * because backend_find("gpu") fails first; each says so if it were.
 * What it does not do: anything on a device.
 */
#include "backend/gpu/gpu_train.h"

static const char no_gpu[] = "gpu: this build has no gpu backend (no CUDA/cuDNN/cuBLAS found)";

struct gpu_train *gpu_train_open(struct backend *b, const struct optim *o, int accumulate,
				 int ranks, struct trainer_error *err)
{
	(void)b, (void)o, (void)accumulate, (void)ranks;
	trainer_error_set(err, "%s", no_gpu);
	return NULL;
}

void gpu_train_close(struct gpu_train *g) { (void)g; }
int gpu_train_graphs(const struct backend *b) { (void)b; return 0; }
void *gpu_train_stream(const struct gpu_train *g) { (void)g; return NULL; }
const struct grad_sync_device *gpu_train_grad_hooks(struct gpu_train *g) { (void)g; return NULL; }
struct gpu_staging *gpu_staging_open(struct backend *b, struct trainer_error *err)
{
	(void)b;
	trainer_error_set(err, "gpu: no gpu backend in this build");
	return NULL;
}
const struct dist_staging *gpu_staging_hooks(struct gpu_staging *g) { (void)g; return NULL; }
void gpu_staging_close(struct gpu_staging *g) { (void)g; }
float *gpu_train_stats_device(struct gpu_train *g) { (void)g; return NULL; }

int gpu_train_load_moments(struct gpu_train *g, const struct optim *o, struct trainer_error *err)
{
	(void)g, (void)o;
	return trainer_error_set(err, "%s", no_gpu);
}

int gpu_train_optim_step(struct gpu_train *g, struct optim *o, double lr,
			 struct trainer_error *err)
{
	(void)g, (void)o, (void)lr;
	return trainer_error_set(err, "%s", no_gpu);
}

int gpu_train_sync_host(struct gpu_train *g, struct optim *o, struct trainer_error *err)
{
	(void)g, (void)o;
	return trainer_error_set(err, "%s", no_gpu);
}

int gpu_train_stats_put(struct gpu_train *g, const float *stats, int count,
			struct trainer_error *err)
{
	(void)g, (void)stats, (void)count;
	return trainer_error_set(err, "%s", no_gpu);
}

int gpu_train_stats_get(struct gpu_train *g, float *stats, int count, struct trainer_error *err)
{
	(void)g, (void)stats, (void)count;
	return trainer_error_set(err, "%s", no_gpu);
}

int gpu_train_found_inf(const struct backend *b) { (void)b; return 0; }
int gpu_train_prefetch(struct backend *b, const struct batch *batch, int count,
		       struct trainer_error *err)
{
	(void)b, (void)batch, (void)count, (void)err;
	return 0;
}
int gpu_train_loss_scale_update(struct backend *b, int found_inf) { (void)b, (void)found_inf; return 0; }
double gpu_train_loss_scale(const struct backend *b) { (void)b; return 1.0; }
const char *gpu_train_bus_id(const struct backend *b) { (void)b; return ""; }

int gpu_train_health_line(struct backend *b, char *line, size_t len, struct trainer_error *err)
{
	(void)b;
	if (len)
		line[0] = '\0';
	return trainer_error_set(err, "%s", no_gpu);
}

void gpu_train_health_summary(const struct backend *b, char *msg, size_t len)
{
	(void)b;
	if (len)
		msg[0] = '\0';
}

const struct span_ranges *gpu_train_nvtx_ranges(void) { return NULL; }
