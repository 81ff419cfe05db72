/* cmd/bench.c - `chexnet bench`: training steps on one synthetic
 * in-memory batch; images/s and peak RSS, the documents' synthetic-data
 * benchmark.
 * What it does not do: predict (cmd/predict.c) or compare with PyTorch
 * (bench/vs_pytorch does).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "data/sets/labels.h"
#include "train/optim.h"
#include "cmd/run.h"
#include "loop/session.h"
#include "loop/train_device.h"

/* Untimed steps first: 2, or 3 with --cuda-graph on (the first runs
 * uncaptured, the next two capture each image slot's graph), so that the
 * timed steps are what every later step of a run is. */
#define BENCH_WARMUP_STEPS 2

/* The bench's training state: what `chexnet train` has on one rank. */
struct bench {
	struct session s;
	struct optim opt;
	struct grad_sync sync;
	struct train_device device;      /* gpu: gradients and the optimizer on the device */
};

static int failed(const struct trainer_error *err)
{
	fprintf(stderr, "chexnet: %s\n", err->msg);
	return -1;
}

/* One training step as `chexnet train` runs it on one rank: the loss
 * stays on the backend (M3), the optimizer runs where the gradients are,
 * an fp16 overflow skips the step. */
static int bench_step(struct bench *t, struct batch *b)
{
	struct session *s = &t->s;
	struct trainer_error err = { "" };
	struct backend_input in = { .images = b, .count = b->count };

	train_device_step_begin(&t->device);
	if (s->ops->forward(s->backend, &in, 1, NULL, &err) ||
	    s->ops->loss(s->backend, b->labels, NULL, NULL, &err) ||
	    s->ops->backward(s->backend, NULL, NULL, NULL, NULL, &err))
		return failed(&err);
	train_device_after_backward(&t->device);
	struct train_verdict v = { .stop = 0, .skip = train_device_found_inf(&t->device) };
	return train_device_settle(&t->device, &v) ? 0 : train_device_optimize(&t->device, &t->opt, 1e-4);
}

/* The running loss: also the point where a device backend has finished
 * every queued step (the bench's clock reads after it). */
static int bench_loss(struct bench *t, double *loss)
{
	struct trainer_error err = { "" };
	double sum;
	long batches;

	if (t->s.ops->loss_take(t->s.backend, &sum, &batches, &err))
		return failed(&err);
	*loss = batches ? sum / batches : 0.0;
	return 0;
}

static int bench_open(struct bench *t, const struct settings *o)
{
	struct trainer_error err = { "" };

	struct session_config config = o->train.session;

	memset(t, 0, sizeof(*t));
	if (session_open(&t->s, &config))
		return -1;
	if (optim_init(&t->opt, &o->train.optim, t->s.model.desc.param_count, &err))
		return failed(&err);
	if (grad_sync_init(&t->sync, &t->s.model, 1)) {
		fprintf(stderr, "chexnet: bench: out of memory\n");
		return -1;
	}
	return train_device_open(&t->device, &t->s, &t->opt, &t->sync, 1, 1);
}

static void bench_close(struct bench *t)
{
	train_device_close(&t->device);
	grad_sync_free(&t->sync);
	optim_free(&t->opt);
	session_close(&t->s);
}

/* The launches of the timed steps, per step: the calls that put work on
 * the device (a step's kernels, cuDNN and cuBLAS calls and copies) and
 * CUDA graph launches. One process: no NCCL call. Then the convolution
 * algorithm timings at start (cuDNN's Find calls; 0 when the cache held
 * every shape or --conv-algorithms heuristic). Then how many channels the
 * training BN layers computed statistics for (each once a step), of all
 * they normalised. */
static void print_launches(const struct backend_launches *a, const struct backend_launches *b,
			   long steps)
{
	double k = (double)(b->kernels - a->kernels) / steps, d = (double)(b->cudnn - a->cudnn) / steps;
	double g = (double)(b->cublas - a->cublas) / steps, c = (double)(b->copies - a->copies) / steps;
	printf("bench: launches per step: %.1f (kernels %.1f, cuDNN %.1f, cuBLAS %.1f, copies %.1f), "
	       "graph launches %.1f, NCCL calls 0 (one process); algorithm timings at start %lu\n",
	       k + d + g + c, k, d, g, c, (double)(b->graphs - a->graphs) / steps, a->timings);
	printf("bench: batch-norm statistics per step: computed for %.0f of %.0f channels "
	       "normalised\n", (double)(b->bn_computed - a->bn_computed) / steps,
	       (double)(b->bn_normalised - a->bn_normalised) / steps);
}

/* From the gpu backend's device pool plan (no device needed; any
 * backend's bench, where the build has the gpu backend): the largest
 * batch of the model that fits an 80 GiB GPU at 224 px in bf16, the
 * figure a batch size is chosen by on an H100 or H200. */
#define BENCH_DEVICE_GIB 80

static void print_largest_batch(const char *model)
{
	struct trainer_error err = { "" };
	const struct backend_ops *gpu = backend_find("gpu", &err);
	struct model_desc d;
	long n[2] = { -1, -1 };

	if (!gpu || !gpu->largest_batch)
		return;
	if (model_by_name(&d, model, 224, CHEXNET_CLASSES, &err) == 0) {
		for (int me = 0; me < 2 && (me == 0 || n[0] >= 0); me++)
			n[me] = gpu->largest_batch(&d, PRECISION_BF16, me,
						   (size_t)BENCH_DEVICE_GIB << 30, 1L << 20, &err);
		model_desc_free(&d);
	}
	if (n[0] < 0 || n[1] < 0) {
		fprintf(stderr, "chexnet: bench: largest batch: %s\n", err.msg);
		return;
	}
	printf("bench: largest batch of %s on an %d GiB GPU at 224 px, bf16: %ld, %ld with "
	       "--memory-efficient (the gpu backend's device pool plan)\n", model, BENCH_DEVICE_GIB,
	       n[0], n[1]);
}

int run_bench(const struct settings *o)
{
	struct bench *t = calloc(1, sizeof(*t));
	struct source src;
	struct batch *b;
	double wait, loss = 0;
	long steps = o->train.steps ? o->train.steps : 10;
	int rc = 0;

	memset(&src, 0, sizeof(src));
	struct session_config shape = o->train.session;
	struct data_config synth = o->train.data;
	synth.dir = NULL;
	synth.synthetic_images = o->train.session.batch;
	if (!t || bench_open(t, o) || source_open(&src, &shape, &synth, DATA_TRAIN, NULL) ||
	    source_next(&src, &b, &wait) != 1) {
		source_close(&src);
		if (t)
			bench_close(t);
		free(t);
		return 1;
	}
	double t0 = 0;
	struct backend_launches l0 = { 0 }, l1 = { 0 };
	long warmup = o->train.session.cuda_graph ? BENCH_WARMUP_STEPS + 1 : BENCH_WARMUP_STEPS;
	for (long i = 0; i < steps + warmup && rc == 0; i++) {
		if (i == warmup && (rc = bench_loss(t, &loss)) == 0) {
			t0 = now_seconds();
			if (t->s.ops->launches)
				t->s.ops->launches(&l0);
		}
		if (rc == 0)
			rc = bench_step(t, b);
		if (rc == 0 && o->train.progress == PROGRESS_JSON && (rc = bench_loss(t, &loss)) == 0)
			printf("{\"event\":\"bench_step\",\"step\":%ld,\"loss\":%.6g}\n", i + 1, loss);
	}
	if (rc == 0 && t->s.ops->launches)
		t->s.ops->launches(&l1);
	if (rc == 0)
		rc = bench_loss(t, &loss);
	double seconds = now_seconds() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	const struct session_config *c = &o->train.session;
	if (rc == 0)
		printf("bench: %s %s %s%s%s%s batch %ld %ld px%s: %.2f images/s, %.1f ms/step, "
		       "peak RSS %.0f MiB, %ld steps\n", c->model, c->backend, precision_name(c->precision),
		       t->s.backend_what[0] ? " (" : "", t->s.backend_what,
		       t->s.backend_what[0] ? ")" : "", c->batch, c->size,
		       c->memory_efficient ? " memory-efficient" : "",
		       steps * c->batch / seconds, 1e3 * seconds / steps, ru.ru_maxrss / 1024.0, steps);
	if (rc == 0 && t->s.ops->launches)
		print_launches(&l0, &l1, steps);
	if (rc == 0)
		print_largest_batch(o->train.session.model);
	source_close(&src);
	bench_close(t);
	free(t);
	return rc == 0 ? 0 : 1;
}
