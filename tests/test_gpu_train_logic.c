/* test_gpu_train_logic.c - the pure logic of multi-rank GPU training,
 * on the CPU (group gpu-train): the per-step verdict (stop, fp16
 * overflow agreed through one average allreduce) simulated over several
 * ranks, loss scalers that stay identical when fed the agreed verdict,
 * grad_sync's device mode (hooks called in backward order with the right
 * micro-batch, device ranges submitted, host gradients untouched), and
 * the health helpers (text through floats, shared GPU per host).
 * What this does not do: run CUDA or NCCL (no GPU here: gpu_train.c and
 * comm_nccl.c are compiled with -Werror only).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_loss_scale.h"
#include "train/grad_sync.h"
#include "model/model.h"
#include "loop/train_health.h"
#include "train/verdict.h"
#include "runner.h"

#define RANKS 4

/* What the runtime's average allreduce gives every rank. */
static void average_over_ranks(float stats[RANKS][TRAIN_STATS], float *avg)
{
	for (int i = 0; i < TRAIN_STATS; i++) {
		float sum = 0.0f;
		for (int r = 0; r < RANKS; r++)
			sum += stats[r][i];
		avg[i] = sum / RANKS;
	}
}

static void verdict_of(const int *stop, const int *inf, struct train_verdict *v)
{
	float stats[RANKS][TRAIN_STATS], avg[TRAIN_STATS];

	for (int r = 0; r < RANKS; r++)
		train_verdict_pack(stats[r], stop[r], inf[r]);
	average_over_ranks(stats, avg);
	train_verdict_read(avg, v);
}

static void test_verdict_any_rank_overflow_skips(void)
{
	int none[RANKS] = { 0 }, one[RANKS] = { 0, 0, 1, 0 }, all[RANKS] = { 1, 1, 1, 1 };
	struct train_verdict v;

	verdict_of(none, none, &v);
	CHECK(!v.skip && !v.stop);
	verdict_of(none, one, &v);
	CHECK_MSG(v.skip && !v.stop, "one rank's overflow must skip everywhere");
	verdict_of(one, none, &v);
	CHECK_MSG(v.stop && !v.skip, "one rank's stop request must stop everywhere");
	verdict_of(all, all, &v);
	CHECK(v.skip && v.stop);
	/* a NaN stat (garbage from one rank) is never read as clean */
	float nan_stats[TRAIN_STATS] = { 0.0f, NAN };
	train_verdict_read(nan_stats, &v);
	CHECK(v.skip);
	/* the flags survive the float average for big worlds too */
	float tiny[TRAIN_STATS] = { 1.0f / 4096.0f, 1.0f / 4096.0f };
	train_verdict_read(tiny, &v);
	CHECK(v.skip && v.stop);
}

/* Ranks overflow at different steps; fed the agreed verdict, every
 * rank's scaler takes the same path; fed its own flag, they drift. */
static void test_agreed_verdict_keeps_scales_equal(void)
{
	struct gpu_loss_scale agreed[RANKS], local[RANKS];
	struct trainer_error err = { "" };
	int stop[RANKS] = { 0 }, skips[RANKS] = { 0 };

	for (int r = 0; r < RANKS; r++) {
		CHECK(gpu_loss_scale_init_with(&agreed[r], 1024.0f, 2.0f, 0.5f, 3, &err) == 0);
		local[r] = agreed[r];
	}
	for (int step = 0; step < 20; step++) {
		int inf[RANKS] = { 0 };
		if (step % 7 == 2)
			inf[step % RANKS] = 1;  /* one rank at a time overflows */
		struct train_verdict v;
		verdict_of(stop, inf, &v);
		for (int r = 0; r < RANKS; r++) {
			skips[r] += gpu_loss_scale_update(&agreed[r], v.skip);
			gpu_loss_scale_update(&local[r], inf[r]);
		}
	}
	int drift = 0;
	for (int r = 1; r < RANKS; r++) {
		CHECK(agreed[r].scale == agreed[0].scale && skips[r] == skips[0]);
		CHECK(agreed[r].skipped_steps == agreed[0].skipped_steps);
		drift |= local[r].scale != local[0].scale;
	}
	CHECK_INT(skips[0], 3);
	CHECK_MSG(drift, "local verdicts should have let the scales drift (test is blind)");
}

/* A host stand-in for the device: the arithmetic gpu_train.c queues. */
struct fake_device {
	float *grads, *sum;
	int calls, bad_order, fail_at;
	size_t last_offset;
	int last_micro;
};

static int fake_accumulate(void *ctx, size_t offset, size_t count, int micro, int k)
{
	struct fake_device *d = ctx;

	if (++d->calls == d->fail_at)
		return -1;
	if (micro == d->last_micro && offset >= d->last_offset)
		d->bad_order++;  /* within a micro-batch, offsets must go down */
	d->last_offset = offset;
	d->last_micro = micro;
	for (size_t i = offset; i < offset + count; i++) {
		d->sum[i] = micro ? d->sum[i] + d->grads[i] : d->grads[i];
		if (micro == k - 1)
			d->grads[i] = d->sum[i] * (1.0f / (float)k);
	}
	return 0;
}

static void report_backward(struct grad_sync *g, const struct model *m, struct fake_device *d, int k)
{
	d->last_offset = (size_t)-1;
	for (int i = m->desc.layer_count - 1; i >= 0; i--) {
		const struct model_layer *l = &m->desc.layers[i];
		if (l->weight_count + l->bias_count)
			grad_sync_ready(l->weight_offset, l->weight_count + l->bias_count, g);
	}
	(void)k;
}

static void test_device_mode_accumulates_on_the_device(void)
{
	struct model_desc desc;
	struct model m;
	struct grad_sync g;
	struct trainer_error err = { "" };
	CHECK(model_by_name(&desc, "densenet121", 32, 14, &err) == 0);
	if (model_create(&m, &desc, &err))
		SKIP("model: %s", err.msg);
	size_t n = m.desc.param_count;
	struct fake_device d = { calloc(n, sizeof(float)), calloc(n, sizeof(float)), 0, 0, 0, 0, -1 };
	struct grad_sync_device hooks = { &d, d.grads, fake_accumulate };
	CHECK(d.grads && d.sum && grad_sync_init(&g, &m, 3) == 0);
	grad_sync_use_device(&g, &hooks);
	CHECK(g.sum == NULL);
	for (size_t i = 0; i < n; i++)
		m.grads[i] = -7.0f;  /* host copies: must stay untouched */
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < n; i++)
			d.grads[i] = (float)(k + 1) * (float)(i % 89) * 0.5f;
		grad_sync_begin_micro(&g, k);
		report_backward(&g, &m, &d, 3);
	}
	CHECK(grad_sync_finish(&g) == 0);
	size_t bad = 0, touched = 0;
	for (size_t i = 0; i < n; i++) {
		bad += d.grads[i] != 2.0f * (float)(i % 89) * 0.5f;
		touched += m.grads[i] != -7.0f;
	}
	CHECK_MSG(bad == 0, "%zu device gradients are not the mean of 3 micro-batches", bad);
	CHECK_MSG(touched == 0, "%zu host gradients written in device mode", touched);
	CHECK_INT(d.bad_order, 0);
	CHECK(d.calls > 3 * 100);
	/* a failing hook fails the step */
	d.calls = 0;
	d.fail_at = 5;
	grad_sync_begin_micro(&g, 0);
	report_backward(&g, &m, &d, 3);
	grad_sync_begin_micro(&g, 1);
	report_backward(&g, &m, &d, 3);
	grad_sync_begin_micro(&g, 2);
	report_backward(&g, &m, &d, 3);
	CHECK(grad_sync_finish(&g) == -1);
	grad_sync_free(&g);
	free(d.grads);
	free(d.sum);
	model_destroy(&m);
}

/* K = 1: no hook at all, the device range goes out as backward left it. */
static void test_device_mode_one_micro_batch_submits_untouched(void)
{
	struct model_desc desc;
	struct model m;
	struct grad_sync g;
	struct trainer_error err = { "" };
	CHECK(model_by_name(&desc, "resnet50", 32, 14, &err) == 0);
	if (model_create(&m, &desc, &err))
		SKIP("model: %s", err.msg);
	size_t n = m.desc.param_count;
	struct fake_device d = { calloc(n, sizeof(float)), calloc(n, sizeof(float)), 0, 0, 0, 0, -1 };
	struct grad_sync_device hooks = { &d, d.grads, fake_accumulate };
	CHECK(grad_sync_init(&g, &m, 1) == 0);
	grad_sync_use_device(&g, &hooks);
	for (size_t i = 0; i < n; i++)
		d.grads[i] = (float)i;
	grad_sync_begin_micro(&g, 0);
	report_backward(&g, &m, &d, 1);
	CHECK(grad_sync_finish(&g) == 0);
	CHECK_INT(d.calls, 0);
	CHECK(d.grads[n - 1] == (float)(n - 1));
	grad_sync_free(&g);
	free(d.grads);
	free(d.sum);
	model_destroy(&m);
}

static void test_health_text_through_floats(void)
{
	const char *line = "gpu 0000:3b:00.0: utilisation 97%, memory 30112/81559 MiB";
	float f[TRAIN_HEALTH_TEXT];
	char back[TRAIN_HEALTH_TEXT];

	train_health_pack(line, f, TRAIN_HEALTH_TEXT);
	train_health_unpack(f, TRAIN_HEALTH_TEXT, back);
	CHECK_STR(back, line);
	CHECK(f[TRAIN_HEALTH_TEXT - 1] == 0.0f);
	float small[8];
	train_health_pack(line, small, 8);  /* truncated to 7 chars + NUL */
	train_health_unpack(small, 8, back);
	CHECK_STR(back, "gpu 000");
	small[2] = 300.0f;  /* not a byte: the text ends there */
	train_health_unpack(small, 8, back);
	CHECK_STR(back, "gp");
	small[1] = 1.5f;
	train_health_unpack(small, 8, back);
	CHECK_STR(back, "g");
	train_health_pack("\xe9t\xe9", small, 8);  /* bytes over 127 survive */
	train_health_unpack(small, 8, back);
	CHECK_STR(back, "\xe9t\xe9");
}

static void test_shared_gpu_only_on_the_same_host(void)
{
	char hosts[4][TRAIN_HEALTH_HOST] = { "n1", "n1", "n2", "n1" };
	char bus[4][GPU_BUS_ID_LEN] = { "0000:3b:00.0", "3B:00.0", "0000:3b:00.0", "0000:5e:00.0" };

	CHECK_INT(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 0), 1);
	CHECK_INT(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 1), 1);
	CHECK_MSG(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 2) == 0,
		  "the same bus id on another node is another GPU");
	CHECK_INT(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 3), 0);
	strcpy(hosts[2], "n1");
	CHECK_INT(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 0), 2);
	bus[0][0] = '\0';  /* no bus id (no device): never shared */
	CHECK_INT(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 0), 0);
	CHECK_INT(train_health_shared((const char (*)[TRAIN_HEALTH_HOST])hosts,
				      (const char (*)[GPU_BUS_ID_LEN])bus, 4, 1), 1);
}

const struct test_case gpu_train_tests[] = {
	{ "verdict_any_rank_overflow_skips", test_verdict_any_rank_overflow_skips },
	{ "agreed_verdict_keeps_scales_equal", test_agreed_verdict_keeps_scales_equal },
	{ "device_mode_accumulates_on_the_device", test_device_mode_accumulates_on_the_device },
	{ "device_mode_one_micro_batch_submits_untouched",
	  test_device_mode_one_micro_batch_submits_untouched },
	{ "health_text_through_floats", test_health_text_through_floats },
	{ "shared_gpu_only_on_the_same_host", test_shared_gpu_only_on_the_same_host },
	{ 0 },
};
