/* run_bench.c - `chexnet bench` (training steps on one synthetic
 * in-memory batch: images/s and peak RSS, the documents' synthetic-data
 * benchmark) and `chexnet predict` (14 probabilities per image).
 * What it does not do: compare with PyTorch (bench/vs_pytorch does).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "checkpoint.h"
#include "data_labels.h"
#include "image_decode.h"
#include "loss.h"
#include "optim.h"
#include "run.h"
#include "run_common.h"

#define BENCH_WARMUP_STEPS 2

/* One training step as `chexnet train` runs it on one rank: the loss
 * stays on the backend (M3); read_loss: read it back now (--progress
 * json prints it per step). */
static int bench_step(struct session *s, struct optim *opt, struct batch *b, int read_loss,
		      double *loss)
{
	struct trainer_error err = { "" };
	struct backend_input in = { .images = b, .count = b->count };
	long batches;

	if (s->ops->forward(s->backend, &in, 1, NULL, &err) ||
	    s->ops->loss(s->backend, b->labels, NULL, NULL, &err) ||
	    s->ops->backward(s->backend, NULL, NULL, NULL, NULL, &err) ||
	    (read_loss && s->ops->loss_take(s->backend, loss, &batches, &err))) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	optim_step(opt, s->model.params, s->model.grads, 1e-4);
	if (s->ops->load_params(s->backend, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

int run_bench(const struct cli_options *o)
{
	struct session s;
	struct source src;
	struct optim opt;
	struct trainer_error err = { "" };
	struct batch *b;
	double wait, loss = 0;
	long steps = o->steps ? o->steps : 10;
	int rc = 0;

	if (session_open(&s, o))
		return 1;
	struct cli_options synth = *o;
	synth.data = NULL;
	synth.synthetic_images = o->batch;
	if (source_open(&src, &synth, DATA_TRAIN, NULL) || source_next(&src, &b, &wait) != 1 ||
	    optim_init(&opt, &o->optim, s.model.desc.param_count, &err)) {
		session_close(&s);
		return 1;
	}
	double t0 = 0;
	for (long i = 0; i < steps + BENCH_WARMUP_STEPS && rc == 0; i++) {
		if (i == BENCH_WARMUP_STEPS)
			t0 = now_seconds();
		rc = bench_step(&s, &opt, b, o->progress == PROGRESS_JSON, &loss);
		if (rc == 0 && o->progress == PROGRESS_JSON)
			printf("{\"event\":\"bench_step\",\"step\":%ld,\"loss\":%.6g}\n", i + 1, loss);
	}
	double seconds = now_seconds() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (rc == 0)
		printf("bench: %s %s %s batch %ld %ld px%s: %.2f images/s, %.1f ms/step, "
		       "peak RSS %.0f MiB, %ld steps\n", o->model, o->backend, precision_name(o->precision),
		       o->batch, o->size, o->memory_efficient ? " memory-efficient" : "",
		       steps * o->batch / seconds, 1e3 * seconds / steps, ru.ru_maxrss / 1024.0, steps);
	optim_free(&opt);
	source_close(&src);
	session_close(&s);
	return rc == 0 ? 0 : 1;
}

/* One image through the model in eval mode; prints the path and 14
 * probabilities. */
static int predict_one(struct session *s, struct batch *b, const char *path)
{
	struct trainer_error err = { "" };
	char msg[1024];
	float logits[CHEXNET_CLASSES];

	if (image_load_square(path, b->size, b->pixels, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return -1;
	}
	struct backend_input in = { .images = b, .count = 1 };
	if (s->ops->forward(s->backend, &in, 0, logits, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	printf("%s", path);
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		printf(" %.6f", loss_sigmoid(logits[c]));
	printf("\n");
	return 0;
}

int run_predict(const struct cli_options *o)
{
	struct session s;
	struct trainer_error err = { "" };
	int rc = 0;

	if (!o->checkpoint || o->input_count == 0) {
		fprintf(stderr, "chexnet: predict: need --checkpoint DIR and at least one IMAGE\n");
		return 2;
	}
	struct cli_options one = *o;
	one.batch = 1;
	if (session_open(&s, &one))
		return 1;
	if (checkpoint_load_model(o->checkpoint, &s.model, CHECKPOINT_STRICT, NULL, &err) ||
	    s.ops->load_params(s.backend, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		session_close(&s);
		return 1;
	}
	struct batch b = { .count = 1, .capacity = 1, .size = (int)o->size };
	b.pixels = malloc((size_t)o->size * o->size);
	printf("image");
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		printf(" %s", data_class_names[c]);
	printf("\n");
	for (int i = 0; i < o->input_count && b.pixels; i++)
		if (predict_one(&s, &b, o->inputs[i]))
			rc = 1;
	free(b.pixels);
	session_close(&s);
	return rc;
}
