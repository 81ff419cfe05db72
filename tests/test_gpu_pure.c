/* test_gpu_pure.c - the GPU backend's pure logic, run on the CPU (group
 * gpu-unit): the fp16 loss-scale state machine, the device pool plan and
 * the fit check (M1, M2), the conv-algorithm cache key, table and file, the
 * input geometry (crop/flip windows, launch grid) and the GPU-health
 * verdicts (O1, O2). What it does not test: anything needing a GPU
 * (test_gpu_layers.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "model/model.h"
#include "backend/gpu/gpu_algo_cache.h"
#include "backend/gpu/gpu_algo_file.h"
#include "backend/gpu/gpu_geometry.h"
#include "backend/gpu/gpu_health.h"
#include "backend/gpu/gpu_loss_scale.h"
#include "backend/gpu/gpu_pool_plan.h"

/* --- loss scaler --- */

static void test_loss_scale_defaults_match_torch(void)
{
	struct gpu_loss_scale s;
	gpu_loss_scale_init(&s);
	CHECK_NEAR(s.scale, 65536.0, 0, 0);
	CHECK_INT(s.growth_interval, 2000);
	CHECK_NEAR(s.growth_factor, 2.0, 0, 0);
	CHECK_NEAR(s.backoff_factor, 0.5, 0, 0);
}

static void test_loss_scale_overflow_skips_and_halves(void)
{
	struct gpu_loss_scale s;
	gpu_loss_scale_init(&s);
	for (int i = 0; i < 10; i++)
		CHECK_INT(gpu_loss_scale_update(&s, 0), 0);
	CHECK_INT(gpu_loss_scale_update(&s, 1), 1);
	CHECK_NEAR(s.scale, 32768.0, 0, 0);
	CHECK_INT(s.clean_steps, 0);
	CHECK_INT(s.skipped_steps, 1);
}

static void test_loss_scale_grows_after_interval_only(void)
{
	struct gpu_loss_scale s;
	struct trainer_error err = { "" };
	CHECK_INT(gpu_loss_scale_init_with(&s, 1024.0f, 2.0f, 0.5f, 3, &err), 0);
	gpu_loss_scale_update(&s, 0);
	gpu_loss_scale_update(&s, 0);
	CHECK_NEAR(s.scale, 1024.0, 0, 0);
	gpu_loss_scale_update(&s, 0);
	CHECK_NEAR(s.scale, 2048.0, 0, 0);
	/* an overflow restarts the count */
	gpu_loss_scale_update(&s, 0);
	gpu_loss_scale_update(&s, 0);
	gpu_loss_scale_update(&s, 1);
	CHECK_NEAR(s.scale, 1024.0, 0, 0);
	gpu_loss_scale_update(&s, 0);
	gpu_loss_scale_update(&s, 0);
	CHECK_NEAR(s.scale, 1024.0, 0, 0);
}

static void test_loss_scale_clamped_to_range(void)
{
	struct gpu_loss_scale s;
	struct trainer_error err = { "" };
	CHECK_INT(gpu_loss_scale_init_with(&s, 2.0f, 2.0f, 0.25f, 1, &err), 0);
	gpu_loss_scale_update(&s, 1);
	CHECK_NEAR(s.scale, 1.0, 0, 0);
	gpu_loss_scale_update(&s, 1);
	CHECK_NEAR(s.scale, 1.0, 0, 0);
	CHECK_INT(gpu_loss_scale_init_with(&s, 16777216.0f, 2.0f, 0.5f, 1, &err), 0);
	gpu_loss_scale_update(&s, 0);
	CHECK_NEAR(s.scale, 16777216.0, 0, 0);
}

static void test_loss_scale_rejects_bad_settings(void)
{
	struct gpu_loss_scale s;
	struct trainer_error err = { "" };
	CHECK_INT(gpu_loss_scale_init_with(&s, 0.5f, 2.0f, 0.5f, 10, &err), -1);
	CHECK_CONTAINS(err.msg, "loss scale: '0.5'");
	CHECK_INT(gpu_loss_scale_init_with(&s, 8.0f, 1.0f, 0.5f, 10, &err), -1);
	CHECK_CONTAINS(err.msg, "growth");
	CHECK_INT(gpu_loss_scale_init_with(&s, 8.0f, 2.0f, 1.0f, 10, &err), -1);
	CHECK_CONTAINS(err.msg, "backoff");
	CHECK_INT(gpu_loss_scale_init_with(&s, 8.0f, 2.0f, 0.5f, 0, &err), -1);
	CHECK_CONTAINS(err.msg, "interval");
}

/* --- pool plan --- */

/* (3, 16, 16) -conv 3x3-> dense buffer (24, 16, 16) [c 0..8) -conv-> [8..24) */
static int small_model(struct model_desc *d)
{
	struct trainer_error err = { "" };
	struct model_layer l;

	model_desc_init(d, "layer");
	model_desc_add_tensor(d, "in", TENSOR_PLAIN, 3, 16, 16, &err);
	model_desc_add_tensor(d, "block", TENSOR_CONCAT, 24, 16, 16, &err);
	memset(&l, 0, sizeof(l));
	l.kind = LAYER_CONV;
	l.kernel = 3;
	l.stride = 1;
	l.pad = 1;
	snprintf(l.name, sizeof(l.name), "conv0");
	l.in = (struct tensor_slice){ 0, 0, 3 };
	l.out = (struct tensor_slice){ 1, 0, 8 };
	model_desc_add_layer(d, &l, &err);
	snprintf(l.name, sizeof(l.name), "conv1");
	l.in = (struct tensor_slice){ 1, 0, 8 };
	l.out = (struct tensor_slice){ 1, 8, 16 };
	model_desc_add_layer(d, &l, &err);
	if (model_desc_finish(d, &err)) {
		test_fail_at(__FILE__, __LINE__, "model: %s", err.msg);
		return -1;
	}
	return 0;
}

static int overlaps(struct gpu_region a, struct gpu_region b)
{
	return a.bytes && b.bytes && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

static void test_pool_plan_regions_aligned_and_disjoint(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 4, 2, 1000, 0 };

	if (small_model(&d))
		return;
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	struct gpu_region r[] = { p.act[0], p.act[1], p.grad_arena, p.params, p.grads,
				  p.params_lp, p.dw_lp, p.filter_io, p.state, p.bn_saved, p.io, p.images[0],
				  p.images[1], p.flags, p.loss, p.workspace, p.bn_parts };
	size_t n = sizeof(r) / sizeof(r[0]), sum = 0;
	for (size_t i = 0; i < n; i++) {
		CHECK_INT(r[i].offset % GPU_POOL_ALIGN, 0);
		CHECK(r[i].offset + r[i].bytes <= p.total_bytes);
		sum += r[i].bytes;
		for (size_t j = i + 1; j < n; j++)
			CHECK_MSG(!overlaps(r[i], r[j]), "regions %zu and %zu overlap", i, j);
	}
	CHECK(sum <= p.total_bytes);
	for (int t = 0; t < d.tensor_count; t++) {
		CHECK_INT(p.grad[t].offset % GPU_POOL_ALIGN, 0);
		CHECK(p.grad[t].offset >= p.grad_arena.offset && p.grad[t].offset + p.grad[t].bytes <=
		      p.grad_arena.offset + p.grad_arena.bytes);
		CHECK_INT(p.grad[t].bytes, p.act[t].bytes);
	}
	CHECK_INT(p.act[1].bytes, 4 * 24 * 16 * 16 * 2);            /* N C H W, fp16 */
	CHECK_INT(p.params.bytes, d.param_count * 4);                /* fp32 master */
	CHECK_INT(p.params_lp.bytes, d.param_count * 2);
	CHECK_INT(p.dw_lp.bytes, 16 * 8 * 9 * 2);                     /* largest conv weight */
	CHECK_INT(p.filter_io.bytes, 16 * 8 * 9 * 4);                 /* the same, fp32 */
	CHECK_INT(p.images[0].bytes, 4 * 16 * 16);                    /* uint8 (N, S, S) */
	CHECK_INT(p.io.bytes, 4 * 24 * 16 * 16 * 4);                  /* larger of in, out (block): fp32 */
	CHECK_INT(p.workspace.bytes, 1000);
	struct gpu_loss_layout l;
	const struct model_tensor *out = &d.tensors[d.output_tensor];
	gpu_pool_loss_layout(4, (size_t)out->channels * out->height * out->width, &l);
	CHECK_INT(p.loss.bytes, l.bytes);
	gpu_pool_plan_free(&p);
	model_desc_free(&d);
}

/* Batch norm's partial sums: the widest BN layer's channels (DenseNet-121:
 * norm5, 1024) times GPU_POOL_BN_PARTS, a mean and a sum each, fp32; none
 * in a model without BN. */
static void test_pool_plan_bn_parts_fit_the_widest_layer(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 2, 4, 0, 0 };

	CHECK_INT(model_densenet(&d, &densenet121_config, 64, 14, &err), 0);
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	CHECK_INT(p.bn_parts.bytes, 1024 * GPU_POOL_BN_PARTS * 2 * 4);
	CHECK_INT(p.bn_parts.offset % GPU_POOL_ALIGN, 0);
	gpu_pool_plan_free(&p);
	model_desc_free(&d);
	if (small_model(&d))
		return;
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	CHECK_INT(p.bn_parts.bytes, 0);
	gpu_pool_plan_free(&p);
	model_desc_free(&d);
}

/* One training backward walked over the plan's gradient regions, a
 * 256-byte block at a time: a layer's backward reads its output's
 * gradient (and, accumulating, its input's) and writes its input's; a
 * write takes the blocks of the whole region, a read needs every block
 * still its own. So a region shared too early shows as a block taken by
 * a gradient that is still to be read. Returns the arena's share of the
 * gradients' bytes, in percent. */
static int own(int *owner, const struct gpu_region *r, int t, int take)
{
	for (size_t k = r->offset / GPU_POOL_ALIGN; k * GPU_POOL_ALIGN < r->offset + r->bytes; k++) {
		if (!take && owner[k] != t)
			return -1;
		owner[k] = take ? t : owner[k];
	}
	return 0;
}

static long walk_backward(const struct model_desc *d, const struct gpu_pool_plan *p)
{
	int *owner = calloc(p->total_bytes / GPU_POOL_ALIGN + 1, sizeof(*owner)), bad = 0;
	size_t sum = 0;

	for (int t = 0; t < d->tensor_count; t++)
		sum += p->grad[t].bytes;
	if (!owner || !sum)
		return free(owner), -1;
	own(owner, &p->grad[d->output_tensor], d->output_tensor, 1);
	for (int i = d->layer_count - 1; i >= 0; i--) {
		const struct model_layer *l = &d->layers[i];
		int in = l->in.tensor, out = l->out.tensor, in2 = l->in2.tensor, add = l->kind == LAYER_ADD;
		bad |= own(owner, &p->grad[out], out, 0);
		bad |= l->accumulate_dx && own(owner, &p->grad[in], in, 0);
		bad |= add && l->accumulate_dx2 && own(owner, &p->grad[in2], in2, 0);
		CHECK_MSG(!bad, "layer %d '%s': a gradient it reads was overwritten", i, l->name);
		if (bad)
			break;
		own(owner, &p->grad[in], in, 1);
		if (add)
			own(owner, &p->grad[in2], in2, 1);
	}
	bad |= own(owner, &p->grad[d->input_tensor], d->input_tensor, 0);
	free(owner);
	return bad ? -1 : (long)(100 * p->grad_arena.bytes / sum);
}

/* DenseNet-121 and ResNet-50: every gradient outlives its readers, and
 * sharing by lifetime keeps a fraction of them (the figure printed). */
static void test_pool_plan_gradients_share_by_lifetime(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 2, 2, 0, 0 };

	for (int m = 0; m < 2; m++) {
		CHECK_INT(m ? model_resnet50(&d, 64, 14, &err)
			    : model_densenet(&d, &densenet121_config, 64, 14, &err), 0);
		CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
		long share = walk_backward(&d, &p);
		printf("# %s: gradients take %ld%% of their bytes\n", m ? "resnet50" : "densenet121",
		       share);
		CHECK_MSG(share > 0 && share < 50, "%s: %ld%%", m ? "resnet50" : "densenet121", share);
		gpu_pool_plan_free(&p);
		model_desc_free(&d);
	}
}

/* One training step walked over the activations' regions the same way
 * (--memory-efficient): a forward reads its inputs and takes its output;
 * before a layer's backward the BN outputs it was the last to read are
 * written again (plan.rebuild: reading the BN's input, taking its
 * output's act_bwd), and the backward reads its inputs and output there.
 * Returns the plan's pool bytes, 0 on a failed read. */
static size_t walk_step(const struct model_desc *d, const struct gpu_pool_plan *p)
{
	int *owner = calloc(p->total_bytes / GPU_POOL_ALIGN + 1, sizeof(*owner)), bad = 0;

	if (!owner)
		return 0;
	own(owner, &p->act[d->input_tensor], d->input_tensor, 1);
	for (int i = 0; i < d->layer_count && !bad; i++) {
		const struct model_layer *l = &d->layers[i];
		bad |= own(owner, &p->act[l->in.tensor], l->in.tensor, 0);
		bad |= l->kind == LAYER_ADD && own(owner, &p->act[l->in2.tensor], l->in2.tensor, 0);
		own(owner, &p->act[l->out.tensor], l->out.tensor, 1);
		CHECK_MSG(!bad, "forward of layer %d '%s': an input was overwritten", i, l->name);
	}
	for (int i = d->layer_count - 1; i >= 0 && !bad; i--) {
		const struct model_layer *l = &d->layers[i];
		for (int k = 0; k < 2; k++) {
			const struct model_layer *bn = p->rebuild[i][k] < 0 ? NULL :
						       &d->layers[p->rebuild[i][k]];
			if (!bn)
				continue;
			CHECK(bn->kind == LAYER_BATCHNORM);
			bad |= own(owner, &p->act_bwd[bn->in.tensor], bn->in.tensor, 0);
			own(owner, &p->act_bwd[bn->out.tensor], bn->out.tensor, 1);
		}
		bad |= own(owner, &p->act_bwd[l->in.tensor], l->in.tensor, 0);
		bad |= own(owner, &p->act_bwd[l->out.tensor], l->out.tensor, 0);
		bad |= l->kind == LAYER_ADD && own(owner, &p->act_bwd[l->in2.tensor], l->in2.tensor, 0);
		CHECK_MSG(!bad, "backward of layer %d '%s': an activation it reads is not there", i,
			  l->name);
	}
	free(owner);
	return bad ? 0 : p->total_bytes;
}

/* --memory-efficient keeps every activation a step reads where it reads
 * it, and DenseNet-121's pool shrinks (the figure printed); without it
 * nothing is rebuilt and the walk holds as well. */
static void test_pool_plan_memory_efficient_rebuilds_in_time(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	size_t bytes[2] = { 0, 0 };

	for (int m = 0; m < 2; m++) {
		CHECK_INT(m ? model_resnet50(&d, 64, 14, &err)
			    : model_densenet(&d, &densenet121_config, 64, 14, &err), 0);
		for (int me = 0; me < 2; me++) {
			struct gpu_pool_inputs in = { 2, 2, 0, me };
			int rebuilds = 0;
			CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
			for (int i = 0; i < d.layer_count; i++)
				rebuilds += (p.rebuild[i][0] >= 0) + (p.rebuild[i][1] >= 0);
			CHECK_MSG(me ? rebuilds > 0 : rebuilds == 0, "memory-efficient %d: %d rebuilt",
				  me, rebuilds);
			bytes[me] = walk_step(&d, &p);
			gpu_pool_plan_free(&p);
		}
		printf("# %s: --memory-efficient pool %zu of %zu bytes\n", m ? "resnet50" : "densenet121",
		       bytes[1], bytes[0]);
		CHECK(bytes[1] > 0 && bytes[1] < bytes[0]);
		model_desc_free(&d);
	}
}

/* Channels whose BN statistics a training forward computes, and all it
 * normalises, by the plan's bn_known. */
static void bn_channels(const struct model_desc *d, const struct gpu_pool_plan *p, long *computed,
			long *normalised)
{
	*computed = *normalised = 0;
	for (int i = 0; i < d->layer_count; i++)
		if (d->layers[i].kind == LAYER_BATCHNORM) {
			CHECK(p->bn_known[i] >= 0 && p->bn_known[i] <= d->layers[i].in.channels);
			*computed += d->layers[i].in.channels - p->bn_known[i];
			*normalised += d->layers[i].in.channels;
		} else {
			CHECK_INT(p->bn_known[i], 0);
		}
}

/* DenseNet-121: a channel's statistics once per step. Each block's first
 * norm1 computes the block's c0 input channels, every later norm1, the
 * transition and norm5 only the previous layer's growth channels, each
 * norm2 its own bottleneck; ResNet-50 normalises every conv output
 * once, so it computes all. Every BN input tensor has its stats region. */
static void test_pool_plan_bn_statistics_once_a_step(void)
{
	const struct densenet_config *k = &densenet121_config;
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 2, 4, 0, 0 };
	long computed, normalised, want_c = k->init_features, want_n = k->init_features;
	int c0 = k->init_features, bottleneck = k->bn_size * k->growth;

	for (int b = 0; b < 4; b++) {
		int layers = k->blocks[b], end = c0 + layers * k->growth;
		want_c += end + (long)layers * bottleneck;   /* every channel once */
		want_n += (long)layers * c0 + (long)k->growth * layers * (layers - 1) / 2 +
			  (long)layers * bottleneck + end;   /* norm1s, norm2s, transition or norm5 */
		c0 = end / 2;
	}
	CHECK_INT(model_densenet(&d, k, 64, 14, &err), 0);
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	bn_channels(&d, &p, &computed, &normalised);
	CHECK_MSG(computed == want_c && normalised == want_n, "densenet121: statistics of %ld "
		  "channels computed (want %ld) of %ld normalised (want %ld)", computed, want_c,
		  normalised, want_n);
	for (int i = 0; i < d.layer_count; i++)
		if (d.layers[i].kind == LAYER_BATCHNORM)
			CHECK(p.bn_stats[d.layers[i].in.tensor].bytes ==
			      (size_t)d.tensors[d.layers[i].in.tensor].channels * 8);
	gpu_pool_plan_free(&p);
	model_desc_free(&d);
	CHECK_INT(model_resnet50(&d, 64, 14, &err), 0);
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	bn_channels(&d, &p, &computed, &normalised);
	CHECK_MSG(computed == normalised && computed > 0, "resnet50: %ld of %ld", computed,
		  normalised);
	gpu_pool_plan_free(&p);
	model_desc_free(&d);
}

static void add_layer(struct model_desc *d, enum layer_kind kind, const char *name,
		      struct tensor_slice from, struct tensor_slice to)
{
	struct trainer_error err = { "" };
	struct model_layer l;

	memset(&l, 0, sizeof(l));
	l.kind = kind;
	l.kernel = l.stride = kind == LAYER_CONV;
	snprintf(l.name, sizeof(l.name), "%s", name);
	l.in = from;
	l.out = to;
	CHECK_MSG(model_desc_add_layer(d, &l, &err) == 0, "%s", err.msg);
}

/* A layer that writes channels a BN layer has normalised makes their
 * statistics stale: the next BN layer over them computes them again. */
static void test_pool_plan_bn_statistics_stale_after_a_write(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 2, 4, 0, 0 };

	model_desc_init(&d, "layer");
	model_desc_add_tensor(&d, "in", TENSOR_PLAIN, 8, 4, 4, &err);
	model_desc_add_tensor(&d, "block", TENSOR_CONCAT, 8, 4, 4, &err);
	model_desc_add_tensor(&d, "mid", TENSOR_PLAIN, 8, 4, 4, &err);
	model_desc_add_tensor(&d, "out", TENSOR_PLAIN, 8, 1, 1, &err);
	add_layer(&d, LAYER_CONV, "conv0", (struct tensor_slice){ 0, 0, 8 }, (struct tensor_slice){ 1, 0, 8 });
	add_layer(&d, LAYER_BATCHNORM, "norm0", (struct tensor_slice){ 1, 0, 8 }, (struct tensor_slice){ 2, 0, 8 });
	add_layer(&d, LAYER_CONV, "conv1", (struct tensor_slice){ 2, 0, 4 }, (struct tensor_slice){ 1, 4, 4 });
	add_layer(&d, LAYER_BATCHNORM, "norm1", (struct tensor_slice){ 1, 0, 8 }, (struct tensor_slice){ 2, 0, 8 });
	add_layer(&d, LAYER_GLOBAL_AVGPOOL, "pool", (struct tensor_slice){ 2, 0, 8 }, (struct tensor_slice){ 3, 0, 8 });
	CHECK_MSG(model_desc_finish(&d, &err) == 0, "%s", err.msg);
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	CHECK_INT(p.bn_known[1], 0);
	CHECK_INT(p.bn_known[3], 4);
	gpu_pool_plan_free(&p);
	model_desc_free(&d);
}

/* M3: labels, dy, weights and the running sum share the loss region. */
static void test_pool_loss_layout(void)
{
	struct gpu_loss_layout l;

	gpu_pool_loss_layout(4, 14, &l);
	CHECK_INT(l.labels, 0);
	CHECK_INT(l.w_pos, 4 * 14 * 4);              /* right after the labels: one upload */
	CHECK_INT(l.w_neg, 4 * 14 * 4 + 14 * 4);
	CHECK_INT(l.dy, 4 * 14 * 4 + 2 * 14 * 4);
	CHECK_INT(l.acc % 8, 0);
	CHECK(l.acc >= l.dy + 4 * 14 * 4);
	CHECK_INT(l.bytes, l.acc + 16);
	gpu_pool_loss_layout((size_t)-1 / 2, 14, &l);
	CHECK_INT(l.bytes, 0);
}

static void test_pool_plan_fp32_has_no_low_precision_copies(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 2, 4, 0, 0 };

	if (small_model(&d))
		return;
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), 0);
	CHECK_INT(p.params_lp.bytes, 0);
	CHECK_INT(p.dw_lp.bytes, 0);
	CHECK_INT(p.workspace.bytes, 0);
	gpu_pool_plan_free(&p);
	in.batch = 0;
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), -1);
	CHECK_CONTAINS(err.msg, "batch 0");
	in = (struct gpu_pool_inputs){ 2, 3, 0, 0 };
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), -1);
	model_desc_free(&d);
}

static size_t plan_total(const struct model_desc *d, int n)
{
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { n, 2, 4096, 0 };
	size_t total;

	if (gpu_pool_plan_build(d, &in, &p, &err))
		return 0;
	total = p.total_bytes;
	gpu_pool_plan_free(&p);
	return total;
}

static void test_pool_largest_batch_is_exact(void)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	size_t reserve = 1 << 20;
	struct gpu_pool_inputs like = { 1, 2, 4096, 0 };

	if (small_model(&d))
		return;
	size_t need7 = plan_total(&d, 7);
	CHECK(need7 > plan_total(&d, 6));
	CHECK_INT(gpu_pool_largest_batch(&d, &like, need7 + reserve, reserve, 100, &err), 7);
	CHECK_INT(gpu_pool_largest_batch(&d, &like, need7 + reserve - 1, reserve, 100, &err), 6);
	CHECK_INT(gpu_pool_largest_batch(&d, &like, need7 + reserve, reserve, 5, &err), 5);
	CHECK_INT(gpu_pool_largest_batch(&d, &like, reserve, reserve, 100, &err), 0);
	CHECK_INT(gpu_pool_largest_batch(&d, &like, 0, reserve, 100, &err), 0);
	CHECK_INT(gpu_pool_largest_batch(&d, &like, 1, 0, 0, &err), -1);
	model_desc_free(&d);
}

static void test_pool_fit_check_messages(void)
{
	struct trainer_error err = { "" };
	size_t mib = 1 << 20;

	CHECK_INT(gpu_pool_fit_check(100 * mib, 612 * mib, 512 * mib, 64, 64, 0, &err), 0);
	CHECK_INT(gpu_pool_fit_check(101 * mib, 612 * mib, 512 * mib, 64, 46, 1, &err), -1);
	CHECK_CONTAINS(err.msg, "--batch: '64': needs 101 MiB on GPU 1, 612 MiB free");
	CHECK_CONTAINS(err.msg, "hint: --batch 46 fits");
	CHECK_INT(gpu_pool_fit_check(101 * mib, 100 * mib, 512 * mib, 8, 0, 0, &err), -1);
	CHECK_CONTAINS(err.msg, "not even batch 1 fits");
}

static void test_pool_plan_overflow_is_an_error(void)
{
	struct model_desc d;
	struct gpu_pool_plan p;
	struct trainer_error err = { "" };
	struct gpu_pool_inputs in = { 1 << 30, 4, (size_t)-1 - 10, 0 };

	if (small_model(&d))
		return;
	CHECK_INT(gpu_pool_plan_build(&d, &in, &p, &err), -1);
	CHECK_CONTAINS(err.msg, "overflows");
	model_desc_free(&d);
}

/* --- conv algorithm cache --- */

static struct gpu_conv_key key(int dir, int n, int stride, long long xs)
{
	return (struct gpu_conv_key){ .dir = dir, .dtype = 0, .n = n, .c = 64, .h = 56, .w = 56,
				      .k = 32, .r = 3, .stride = stride, .pad = 1,
				      .x_image_stride = xs, .y_image_stride = 256 * 56 * 56,
				      .budget = 1 << 30 };
}

static void test_algo_cache_hit_only_for_same_shape(void)
{
	static struct gpu_algo_cache c;
	struct gpu_conv_key k = key(GPU_CONV_FWD, 16, 1, 64 * 56 * 56);
	struct gpu_algo_choice choice = { 6, 0, 12345 };

	gpu_algo_cache_init(&c);
	CHECK(gpu_algo_cache_find(&c, &k) == NULL);
	CHECK_INT(gpu_algo_cache_put(&c, &k, &choice), 0);
	const struct gpu_algo_choice *got = gpu_algo_cache_find(&c, &k);
	CHECK(got && got->algo == 6 && got->workspace_bytes == 12345);
	struct gpu_conv_key other[] = {
		key(GPU_CONV_BWD_DATA, 16, 1, 64 * 56 * 56),  /* direction */
		key(GPU_CONV_FWD, 8, 1, 64 * 56 * 56),        /* batch */
		key(GPU_CONV_FWD, 16, 2, 64 * 56 * 56),       /* stride */
		key(GPU_CONV_FWD, 16, 1, 128 * 56 * 56),      /* a slice of a wider buffer */
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		CHECK_MSG(!gpu_conv_key_equal(&k, &other[i]), "key %zu equal", i);
		CHECK_MSG(gpu_algo_cache_find(&c, &other[i]) == NULL, "key %zu hit", i);
	}
	struct gpu_conv_key prec = k, math = k, any = k, budget = k;
	prec.dtype = 2;
	math.math = 1;
	any.any = 1;
	budget.budget = 1 << 20;
	CHECK(gpu_algo_cache_find(&c, &prec) == NULL);
	CHECK(gpu_algo_cache_find(&c, &math) == NULL);
	CHECK(gpu_algo_cache_find(&c, &any) == NULL);
	CHECK(gpu_algo_cache_find(&c, &budget) == NULL);
	CHECK_INT(c.count, 1);
	CHECK_INT(c.hits, 1);
}

static void test_algo_cache_full_table_refuses(void)
{
	static struct gpu_algo_cache c;
	struct gpu_algo_choice choice = { 1, 0, 0 };

	gpu_algo_cache_init(&c);
	for (int i = 0; i < GPU_ALGO_CACHE_SLOTS; i++) {
		struct gpu_conv_key k = key(GPU_CONV_FWD, i + 1, 1, 1);
		CHECK_INT(gpu_algo_cache_put(&c, &k, &choice), 0);
	}
	struct gpu_conv_key extra = key(GPU_CONV_FWD, 0, 1, 1);
	CHECK_INT(gpu_algo_cache_put(&c, &extra, &choice), -1);
	struct gpu_conv_key first = key(GPU_CONV_FWD, 1, 1, 1);
	choice.algo = 4;
	CHECK_INT(gpu_algo_cache_put(&c, &first, &choice), 0);   /* update in place */
	CHECK(gpu_algo_cache_find(&c, &first) && gpu_algo_cache_find(&c, &first)->algo == 4);
	CHECK_INT(c.count, GPU_ALGO_CACHE_SLOTS);
}

/* --- the per-user file of timed choices (gpu_algo_file.h) --- */

#define DEVICE "emulated device|sm 90|driver 13000|cuDNN 91900|CUDA runtime 13000"

static void test_algo_file_round_trip(void)
{
	static struct gpu_algo_cache c, back;
	struct gpu_algo_choice a = { 2, 0, 4096 }, b = { 3, 1, 0 };
	struct gpu_conv_key k1 = key(GPU_CONV_FWD, 16, 1, 64 * 56 * 56), k2 = key(GPU_CONV_BWD_FILTER, 3, 2, 7);
	char why[256] = "", path[512];

	gpu_algo_cache_init(&c);
	k2.any = 1;
	gpu_algo_cache_put(&c, &k1, &a);
	gpu_algo_cache_put(&c, &k2, &b);
	char *text = gpu_algo_file_format(&c, DEVICE);
	CHECK(text != NULL);
	if (!text)
		return;
	CHECK_MSG(gpu_algo_file_parse(text, strlen(text), DEVICE, &back, why, sizeof(why)) == 0, "%s", why);
	CHECK_INT(back.count, 2);
	const struct gpu_algo_choice *g1 = gpu_algo_cache_find(&back, &k1), *g2 = gpu_algo_cache_find(&back, &k2);
	CHECK(g1 && g1->algo == 2 && g1->workspace_bytes == 4096);
	CHECK(g2 && g2->algo == 3 && g2->math_type == 1);
	gpu_algo_file_path(test_tmpdir(), DEVICE, path, sizeof(path));
	CHECK_CONTAINS(path, "/conv-algorithms-");
	CHECK_INT(gpu_algo_file_read(path, DEVICE, &back, why, sizeof(why)), 1);   /* none yet */
	CHECK_MSG(gpu_algo_file_write(test_tmpdir(), path, &c, DEVICE, why, sizeof(why)) == 0, "%s", why);
	CHECK_MSG(gpu_algo_file_read(path, DEVICE, &back, why, sizeof(why)) == 0, "%s", why);
	CHECK_INT(back.count, 2);
	free(text);
}

/* Each fault refuses the whole file, in one phrase naming the line. */
static void test_algo_file_refuses_what_it_cannot_trust(void)
{
	static struct gpu_algo_cache back;
	static const struct { const char *text, *why; } bad[] = {
		{ "chexnet-conv-algorithms 2\n", "not a chexnet-conv-algorithms 1 file" },
		{ "chexnet-conv-algorithms 1\ndevice other|sm 80\n", "line 2: made for another device" },
		{ "chexnet-conv-algorithms 1\ndevice " DEVICE "\n0 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 2 0\n",
		  "line 3: expected 19 numbers" },
		{ "chexnet-conv-algorithms 1\ndevice " DEVICE "\n0 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 2 0 101\n",
		  "line 3: workspace over the budget" },
		{ "chexnet-conv-algorithms 1\ndevice " DEVICE "\n3 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 2 0 1\n",
		  "line 3: number 1 out of range" },
		{ "chexnet-conv-algorithms 1\ndevice " DEVICE "\n0 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 2 0 -1\n",
		  "line 3: expected 19 numbers" },
		{ "chexnet-conv-algorithms 1\ndevice " DEVICE "\n0 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 2 0 1\n"
		  "0 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 3 0 1\n", "line 4: a key seen before" },
		{ "chexnet-conv-algorithms 1\ndevice " DEVICE "\n0 0 0 0 0 1 1 1 1 1 1 1 0 1 1 100 2 0 1",
		  "line 3: too long, or not ended by a newline" },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK_MSG(gpu_algo_file_parse(bad[i].text, strlen(bad[i].text), DEVICE, &back, why,
					      sizeof(why)) == -1, "case %zu accepted", i);
		CHECK_STR(why, bad[i].why);
	}
	/* a link is never followed, even to a good file */
	char *good = test_path(test_tmpdir(), "good"), *link = test_path(test_tmpdir(), "link");
	const char *ok = "chexnet-conv-algorithms 1\ndevice " DEVICE "\n";
	CHECK(test_write_file(good, ok, strlen(ok)) == 0);
	CHECK_INT(gpu_algo_file_read(good, DEVICE, &back, why, sizeof(why)), 0);
	CHECK(symlink(good, link) == 0);
	CHECK_INT(gpu_algo_file_read(link, DEVICE, &back, why, sizeof(why)), -1);
	CHECK_CONTAINS(why, "symbolic link");
	free(good);
	free(link);
}

/* --- input geometry --- */

static void test_geometry_whole_image(void)
{
	struct gpu_input_geometry g;
	struct trainer_error err = { "" };

	CHECK_INT(gpu_input_geometry_init(&g, 16, 224, 224, NULL, &err), 0);
	CHECK_INT(g.blocks, (16 * 224 * 224 + 255) / 256);
	CHECK_INT(g.out_image_elems, 3 * 224 * 224);
	CHECK_INT(g.src_image_bytes, 224 * 224);
	CHECK_INT(gpu_input_geometry_init(&g, 16, 256, 224, NULL, &err), -1);
	CHECK_CONTAINS(err.msg, "no crop windows");
	CHECK_INT(gpu_input_geometry_init(&g, 0, 224, 224, NULL, &err), -1);
}

static void test_geometry_crop_windows_and_flip(void)
{
	struct gpu_input_geometry g;
	struct trainer_error err = { "" };
	struct gpu_crop ok[2] = { { 0, 32, 0 }, { 32, 0, 1 } };
	struct gpu_crop bad[2] = { { 0, 0, 0 }, { 33, 0, 0 } };
	int sx, sy;

	CHECK_INT(gpu_input_geometry_init(&g, 2, 256, 224, ok, &err), 0);
	CHECK_INT(gpu_input_geometry_init(&g, 2, 256, 224, bad, &err), -1);
	CHECK_CONTAINS(err.msg, "image 1: window (33, 0)");
	gpu_crop_source(&ok[0], 224, 5, 7, &sx, &sy);
	CHECK_INT(sx, 5);
	CHECK_INT(sy, 39);
	gpu_crop_source(&ok[1], 224, 0, 0, &sx, &sy);   /* flipped: first column reads the last */
	CHECK_INT(sx, 32 + 223);
	CHECK_INT(sy, 0);
	gpu_crop_source(&ok[1], 224, 223, 3, &sx, &sy);
	CHECK_INT(sx, 32);
	CHECK_INT(sy, 3);
}

/* --- health --- */

static void test_health_sharing_by_bus_id(void)
{
	const char ids[4][GPU_BUS_ID_LEN] = { "0000:3B:00.0", "3b:00.0", "0000:5e:00.0", "" };

	CHECK_INT(gpu_health_sharing(ids, 4, 0), 1);
	CHECK_INT(gpu_health_sharing(ids, 4, 1), 1);
	CHECK_INT(gpu_health_sharing(ids, 4, 2), 0);
	const char other_domain[2][GPU_BUS_ID_LEN] = { "0001:3b:00.0", "0000:3b:00.0" };
	CHECK_INT(gpu_health_sharing(other_domain, 2, 0), 0);
	char msg[256];
	gpu_health_sharing_message(1, "0000:3b:00.0", msg, sizeof(msg));
	CHECK_CONTAINS(msg, "warning: gpu: '0000:3b:00.0': shared with 1 other rank on this node");
	gpu_health_sharing_message(0, "0000:3b:00.0", msg, sizeof(msg));
	CHECK_STR(msg, "");
}

static void test_health_utilisation_threshold(void)
{
	const unsigned busy[4] = { 95, 90, 15, 100 }, idle[4] = { 95, 90, 15, 80 };
	struct gpu_util_summary s;
	char msg[256];

	gpu_health_summarise(busy, 4, &s);
	CHECK_NEAR(s.mean_percent, 75.0, 1e-9, 0);
	CHECK(s.warn);
	gpu_health_summarise(idle, 3, &s);
	CHECK(s.warn);                          /* (95+90+15)/3 = 66.7 */
	gpu_health_summarise(idle, 2, &s);
	CHECK(!s.warn);
	CHECK_NEAR(s.below_fraction, 0.0, 0, 0);
	const unsigned edge[2] = { 80, 80 };
	gpu_health_summarise(edge, 2, &s);
	CHECK(!s.warn);
	gpu_health_summarise(busy, 4, &s);
	gpu_health_util_message(&s, "0000:3b:00.0", msg, sizeof(msg));
	CHECK_CONTAINS(msg, "utilisation 75% on average over 4 samples (25% of them under 80%)");
	gpu_health_summarise(busy, 0, &s);
	CHECK(!s.warn);
}

static void test_nvml_missing_is_a_clear_error(void)
{
	struct trainer_error err = { "" };
	struct gpu_nvml *n = gpu_nvml_open("0000:3b:00.0", &err);

	if (n) {
		gpu_nvml_close(n);
		SKIP("NVML present on this machine: nothing to refuse");
	}
	CHECK_CONTAINS(err.msg, "gpu health: ");
}

const struct test_case gpu_unit_tests[] = {
	{ "loss_scale_defaults_match_torch", test_loss_scale_defaults_match_torch },
	{ "loss_scale_overflow_skips_and_halves", test_loss_scale_overflow_skips_and_halves },
	{ "loss_scale_grows_after_interval_only", test_loss_scale_grows_after_interval_only },
	{ "loss_scale_clamped_to_range", test_loss_scale_clamped_to_range },
	{ "loss_scale_rejects_bad_settings", test_loss_scale_rejects_bad_settings },
	{ "pool_plan_regions_aligned_and_disjoint", test_pool_plan_regions_aligned_and_disjoint },
	{ "pool_plan_bn_parts_fit_the_widest_layer", test_pool_plan_bn_parts_fit_the_widest_layer },
	{ "pool_plan_gradients_share_by_lifetime", test_pool_plan_gradients_share_by_lifetime },
	{ "pool_plan_memory_efficient_rebuilds_in_time",
	  test_pool_plan_memory_efficient_rebuilds_in_time },
	{ "pool_plan_bn_statistics_once_a_step", test_pool_plan_bn_statistics_once_a_step },
	{ "pool_plan_bn_statistics_stale_after_a_write", test_pool_plan_bn_statistics_stale_after_a_write },
	{ "pool_loss_layout", test_pool_loss_layout },
	{ "pool_plan_fp32_has_no_low_precision_copies", test_pool_plan_fp32_has_no_low_precision_copies },
	{ "pool_largest_batch_is_exact", test_pool_largest_batch_is_exact },
	{ "pool_fit_check_messages", test_pool_fit_check_messages },
	{ "pool_plan_overflow_is_an_error", test_pool_plan_overflow_is_an_error },
	{ "algo_cache_hit_only_for_same_shape", test_algo_cache_hit_only_for_same_shape },
	{ "algo_cache_full_table_refuses", test_algo_cache_full_table_refuses },
	{ "algo_file_round_trip", test_algo_file_round_trip },
	{ "algo_file_refuses_what_it_cannot_trust", test_algo_file_refuses_what_it_cannot_trust },
	{ "geometry_whole_image", test_geometry_whole_image },
	{ "geometry_crop_windows_and_flip", test_geometry_crop_windows_and_flip },
	{ "health_sharing_by_bus_id", test_health_sharing_by_bus_id },
	{ "health_utilisation_threshold", test_health_utilisation_threshold },
	{ "nvml_missing_is_a_clear_error", test_nvml_missing_is_a_clear_error },
	{ 0 }
};
