/* cpu_profile.c - where a DenseNet-121 training step's time goes on the
 * cpu backend: runs a few synthetic steps and prints oneDNN primitive time
 * by kind and the top primitives (bench, not a test). Built and run by
 * bench/vs_pytorch/run.sh:
 *   cpu_profile [fp32|bf16] [batch] [size] [memory-efficient 0|1]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "model/loss.h"
#include "model/model.h"
#include "base/batch.h"
#include "base/rng.h"
#include "backend/cpu/backend_cpu.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
	enum precision p = argc > 1 && strcmp(argv[1], "bf16") == 0 ? PRECISION_BF16 : PRECISION_FP32;
	int n = argc > 2 ? atoi(argv[2]) : 16, size = argc > 3 ? atoi(argv[3]) : 224;
	int me = argc > 4 ? atoi(argv[4]) : 0;
	struct model_desc d;
	struct model m;
	struct trainer_error err = { "" };
	if (model_by_name(&d, "densenet121", size, 14, &err) || model_create(&m, &d, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 1;
	}
	model_init_params(&m, 1);
	struct backend_options opt = { .max_batch = n, .precision = p, .memory_efficient = me };
	struct backend *b = backend_cpu_ops.create(&m, &opt, &err);
	if (!b) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 1;
	}
	/* grayscale images, as training feeds them (no input gradient: the
	 * stem's backward data is not run, as in a training step) */
	size_t pn = (size_t)n * size * size;
	uint8_t *pixels = malloc(pn);
	float *y = calloc((size_t)n * 14, sizeof(float));
	float *labels = calloc((size_t)n * 14, sizeof(float)), *dy = calloc((size_t)n * 14, sizeof(float));
	struct rng r;
	rng_seed(&r, 2);
	for (size_t i = 0; i < pn; i++)
		pixels[i] = (uint8_t)(rng_next(&r) >> 56);
	struct batch images = { .count = n, .capacity = n, .size = size, .pixels = pixels,
				.labels = labels };
	struct backend_input in = { .images = &images, .count = n };
	double fwd = 0, bwd = 0;
	for (int step = 0; step < 3; step++) {
		if (step == 1)
			cpu_backend_profile_start(b);
		double t0 = now_s();
		if (backend_cpu_ops.forward(b, &in, 1, y, &err))
			break;
		double t1 = now_s();
		loss_bce(y, labels, n, 14, NULL, NULL, dy);
		if (backend_cpu_ops.backward(b, dy, NULL, NULL, NULL, &err))
			break;
		if (step >= 1)
			fwd += t1 - t0, bwd += now_s() - t1;
	}
	if (err.msg[0]) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return 1;
	}
	printf("densenet121 %s batch %d %d px%s: forward %.1f ms, backward %.1f ms per step "
	       "(2 profiled steps, one stream wait per primitive)\n", precision_name(p), n, size,
	       me ? " memory-efficient" : "", 500 * fwd, 500 * bwd);
	cpu_backend_profile_print(b, stdout, 25);
	backend_cpu_ops.destroy(b);
	model_destroy(&m);
	return 0;
}
