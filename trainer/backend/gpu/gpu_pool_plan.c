/* gpu_pool_plan.c - the device pool's layout and the fit check (see
 * gpu_pool_plan.h). Pure arithmetic over the model description, with
 * overflow checks: a batch that would wrap size_t is an error, never a
 * small pool. What it does not do: touch the GPU.
 */
#include <stdint.h>
#include <stdlib.h>

#include "backend/arena.h"
#include "backend/gpu/gpu_pool_plan.h"

struct cursor {
	size_t next;
	int overflow;
};

static size_t mul_or_flag(struct cursor *c, size_t a, size_t b)
{
	if (a && b > SIZE_MAX / a) {
		c->overflow = 1;
		return 0;
	}
	return a * b;
}

/* bytes up to a whole GPU_POOL_ALIGN; flags a wrap. */
static size_t round_up(struct cursor *c, size_t bytes)
{
	size_t r = (bytes + GPU_POOL_ALIGN - 1) / GPU_POOL_ALIGN * GPU_POOL_ALIGN;

	c->overflow |= r < bytes;
	return r;
}

/* Next region of `bytes`, aligned; zero-byte regions get offset 0. */
static struct gpu_region take(struct cursor *c, size_t bytes)
{
	struct gpu_region r = { 0, bytes };

	if (!bytes || c->overflow)
		return r;
	size_t rounded = round_up(c, bytes);
	if (c->overflow || c->next > SIZE_MAX - rounded) {
		c->overflow = 1;
		return r;
	}
	r.offset = c->next;
	c->next += rounded;
	return r;
}

static size_t tensor_elems(const struct model_tensor *t)
{
	return (size_t)t->channels * t->height * t->width;
}

static size_t largest_conv_weight(const struct model_desc *d)
{
	size_t most = 0;

	for (int i = 0; i < d->layer_count; i++)
		if (d->layers[i].kind == LAYER_CONV && d->layers[i].weight_count > most)
			most = d->layers[i].weight_count;
	return most;
}

/* plan->bn_known, walking the forward in order: have[t] leading channels
 * of tensor t hold statistics; a BN layer whose slice starts within them
 * extends them, and every layer's output slice cuts them back to where it
 * writes. */
static void plan_bn_known(const struct model_desc *d, struct gpu_pool_plan *plan, int *have)
{
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *l = &d->layers[i];
		const struct tensor_slice *in = &l->in, *out = &l->out;
		if (l->kind == LAYER_BATCHNORM && in->c0 <= have[in->tensor]) {
			int k = have[in->tensor] - in->c0;
			plan->bn_known[i] = k < in->channels ? k : in->channels;
			if (in->c0 + in->channels > have[in->tensor])
				have[in->tensor] = in->c0 + in->channels;
		}
		if (have[out->tensor] > out->c0)
			have[out->tensor] = out->c0;
	}
}

/* Where layer i's backward runs in a step: after the L forwards, in
 * reverse. */
static int bwd_step(const struct model_desc *d, int i)
{
	return d->layer_count + (d->layer_count - 1 - i);
}

/* Tensor t's gradient is written first by the backward of its last
 * reader and read last by the backward of its first writer; the output's
 * arrives before any backward (from the loss), the input's leaves after
 * all of them (dx). */
static void grad_lifetime(const struct model_desc *d, int t, int *first, int *last)
{
	int L = d->layer_count;

	*first = 2 * L, *last = L;
	for (int i = 0; i < L; i++) {
		const struct model_layer *l = &d->layers[i];
		if ((l->in.tensor == t || (l->kind == LAYER_ADD && l->in2.tensor == t)) &&
		    bwd_step(d, i) < *first)
			*first = bwd_step(d, i);
		if (l->out.tensor == t && bwd_step(d, i) > *last)
			*last = bwd_step(d, i);
	}
	if (t == d->output_tensor)
		*first = L;
	if (t == d->input_tensor)
		*last = 2 * L;
}

/* Every tensor's gradient in one region of the pool, two sharing bytes
 * only when their lifetimes do not meet (backend/arena.h): a step holds
 * the gradients of a dense block's buffer and of the layers around it,
 * not of the whole network. */
static void plan_grads(const struct model_desc *d, size_t n, size_t e, struct gpu_pool_plan *plan,
		       struct cursor *c)
{
	struct arena_plan a;
	long *id = calloc((size_t)d->tensor_count, sizeof(*id));
	size_t total = 0, sum = 0;  /* the arena adds without checks: the sum bounds it */

	arena_plan_init(&a);
	for (int t = 0; t < d->tensor_count && id; t++) {
		size_t bytes = mul_or_flag(c, mul_or_flag(c, n, tensor_elems(&d->tensors[t])), e);
		/* whole multiples keep every offset the arena gives aligned */
		size_t rounded = round_up(c, bytes);
		int first, last;
		grad_lifetime(d, t, &first, &last);
		plan->grad[t].bytes = bytes;
		if (c->overflow || sum > SIZE_MAX / 2 - rounded)
			c->overflow = 1;
		else
			id[t] = arena_add(&a, rounded, first, last);
		sum += rounded;
	}
	if (!id || arena_plan_solve(&a, &total))
		c->overflow = 1;
	plan->grad_arena = take(c, total);
	for (int t = 0; t < d->tensor_count && id && !c->overflow; t++)
		plan->grad[t].offset = plan->grad[t].bytes ?
			plan->grad_arena.offset + arena_offset(&a, id[t]) : 0;
	arena_plan_free(&a);
	free(id);
}

static int reads(const struct model_layer *l, int t)
{
	return l->in.tensor == t || (l->kind == LAYER_ADD && l->in2.tensor == t);
}

/* --memory-efficient: tensor t is a BN(+ReLU) output that only later
 * layers read, written whole by that one layer from a tensor kept, so
 * backward can rebuild it from the step's saved statistics (Pleiss et al.
 * 2017). *bn: the BN layer; *reader: its last reader. */
static int rebuilt(const struct model_desc *d, int t, int *bn, int *reader)
{
	*bn = *reader = -1;
	if (t == d->output_tensor || t == d->input_tensor || d->tensors[t].kind != TENSOR_PLAIN)
		return 0;
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *l = &d->layers[i];
		if (l->out.tensor == t) {
			if (*bn >= 0 || l->kind != LAYER_BATCHNORM || l->in.tensor == t ||
			    l->out.c0 != 0 || l->out.channels != d->tensors[t].channels)
				return 0;
			*bn = i;
		} else if (reads(l, t)) {
			if (*bn < 0)
				return 0;
			*reader = i;
		}
	}
	int in_bn, in_reader;
	return *reader > *bn && !rebuilt(d, d->layers[*bn].in.tensor, &in_bn, &in_reader);
}

/* Each rebuilt tensor twice in one region: for forward from its BN to
 * its last reader (plan->act), for backward from that reader's backward
 * (where it is rebuilt) to its BN's (plan->act_bwd). plan->rebuild[reader]
 * names the BN. */
static void plan_rebuilt(const struct model_desc *d, size_t n, size_t e,
			 struct gpu_pool_plan *plan, struct cursor *c)
{
	struct arena_plan a;
	long (*id)[2] = calloc((size_t)d->tensor_count, sizeof(*id));
	size_t total = 0, sum = 0;

	arena_plan_init(&a);
	for (int t = 0; t < d->tensor_count && id; t++) {
		int bn, reader, slot;
		id[t][0] = id[t][1] = -1;
		if (!rebuilt(d, t, &bn, &reader))
			continue;
		plan->act[t].bytes = mul_or_flag(c, mul_or_flag(c, n, tensor_elems(&d->tensors[t])), e);
		plan->act_bwd[t].bytes = plan->act[t].bytes;
		size_t bytes = round_up(c, plan->act[t].bytes);
		if (sum > SIZE_MAX / 4 - bytes) {
			c->overflow = 1;
			break;
		}
		sum += 2 * bytes;
		id[t][0] = arena_add(&a, bytes, bn, reader);
		id[t][1] = arena_add(&a, bytes, bwd_step(d, reader), bwd_step(d, bn));
		slot = plan->rebuild[reader][0] < 0 ? 0 : 1;
		plan->rebuild[reader][slot] = bn;
	}
	if (!id || arena_plan_solve(&a, &total))
		c->overflow = 1;
	plan->rebuild_arena = take(c, total);
	for (int t = 0; t < d->tensor_count && id && !c->overflow; t++)
		if (id[t][0] >= 0) {
			plan->act[t].offset = plan->rebuild_arena.offset + arena_offset(&a, id[t][0]);
			plan->act_bwd[t].offset = plan->rebuild_arena.offset + arena_offset(&a, id[t][1]);
		}
	arena_plan_free(&a);
	free(id);
}

static size_t widest_batchnorm(const struct model_desc *d)
{
	size_t most = 0;

	for (int i = 0; i < d->layer_count; i++)
		if (d->layers[i].kind == LAYER_BATCHNORM && (size_t)d->layers[i].in.channels > most)
			most = (size_t)d->layers[i].in.channels;
	return most;
}

void gpu_pool_loss_layout(size_t batch, size_t outputs, struct gpu_loss_layout *l)
{
	struct cursor c = { 0, 0 };
	size_t rows = mul_or_flag(&c, mul_or_flag(&c, batch, outputs), sizeof(float));
	size_t row = mul_or_flag(&c, outputs, sizeof(float));

	*l = (struct gpu_loss_layout){ 0 };
	if (c.overflow || rows > SIZE_MAX / 4 || row > SIZE_MAX / 4)
		return;
	l->labels = 0;
	l->w_pos = rows;
	l->w_neg = rows + row;
	l->dy = rows + 2 * row;
	l->acc = (2 * rows + 2 * row + 7) / 8 * 8;
	l->bytes = l->acc + 2 * sizeof(double);
}

static int takes_images(const struct model_desc *d)
{
	const struct model_tensor *t = &d->tensors[d->input_tensor];

	return t->channels == 3 && t->height == t->width;
}

int gpu_pool_plan_build(const struct model_desc *d, const struct gpu_pool_inputs *in,
			struct gpu_pool_plan *plan, struct trainer_error *err)
{
	struct cursor c = { 0, 0 };
	size_t n = (size_t)in->batch, e = in->elem_bytes, lp = e == 4 ? 0 : e;

	*plan = (struct gpu_pool_plan){ 0 };
	if (in->batch < 1 || (e != 2 && e != 4) || d->tensor_count < 1)
		return trainer_error_set(err, "gpu: pool plan: batch %d, element %zu bytes: invalid",
					 in->batch, e);
	plan->act = calloc((size_t)d->tensor_count, sizeof(*plan->act));
	plan->act_bwd = calloc((size_t)d->tensor_count, sizeof(*plan->act_bwd));
	plan->rebuild = malloc(((size_t)d->layer_count + 1) * sizeof(*plan->rebuild));
	plan->grad = calloc((size_t)d->tensor_count, sizeof(*plan->grad));
	plan->bn_stats = calloc((size_t)d->tensor_count, sizeof(*plan->bn_stats));
	plan->bn_known = calloc((size_t)d->layer_count + 1, sizeof(*plan->bn_known));
	int *have = calloc((size_t)d->tensor_count, sizeof(*have));
	if (!plan->act || !plan->act_bwd || !plan->rebuild || !plan->grad || !plan->bn_stats ||
	    !plan->bn_known || !have) {
		free(have);
		gpu_pool_plan_free(plan);
		return trainer_error_set(err, "gpu: pool plan: out of host memory");
	}
	plan_bn_known(d, plan, have);
	free(have);
	plan->tensor_count = d->tensor_count;
	size_t io = tensor_elems(&d->tensors[d->input_tensor]);
	if (tensor_elems(&d->tensors[d->output_tensor]) > io)
		io = tensor_elems(&d->tensors[d->output_tensor]);
	for (int i = 0; i <= d->layer_count; i++)
		plan->rebuild[i][0] = plan->rebuild[i][1] = -1;
	if (in->memory_efficient)
		plan_rebuilt(d, n, e, plan, &c);
	for (int t = 0; t < d->tensor_count; t++) {
		if (!plan->act[t].bytes)   /* kept for the step: one place */
			plan->act[t] = plan->act_bwd[t] = take(&c, mul_or_flag(&c, mul_or_flag(&c, n,
						tensor_elems(&d->tensors[t])), e));
	}
	plan_grads(d, n, e, plan, &c);
	plan->params = take(&c, mul_or_flag(&c, d->param_count, 4));
	plan->grads = take(&c, mul_or_flag(&c, d->param_count, 4));
	plan->params_lp = take(&c, mul_or_flag(&c, d->param_count, lp));
	plan->dw_lp = take(&c, mul_or_flag(&c, largest_conv_weight(d), lp));
	plan->filter_io = take(&c, mul_or_flag(&c, largest_conv_weight(d), 4));
	plan->state = take(&c, mul_or_flag(&c, d->state_count, 4));
	plan->bn_saved = take(&c, mul_or_flag(&c, d->state_count, 8));
	plan->bn_parts = take(&c, mul_or_flag(&c, widest_batchnorm(d), GPU_POOL_BN_PARTS * 2 * 4));
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *l = &d->layers[i];
		if (l->kind == LAYER_BATCHNORM && !plan->bn_stats[l->in.tensor].bytes)
			plan->bn_stats[l->in.tensor] =
				take(&c, (size_t)d->tensors[l->in.tensor].channels * 8);
	}
	plan->io = take(&c, mul_or_flag(&c, mul_or_flag(&c, n, io), 4));
	if (takes_images(d)) {
		const struct model_tensor *t = &d->tensors[d->input_tensor];
		size_t img = mul_or_flag(&c, n, (size_t)t->height * t->width);
		plan->images[0] = take(&c, img);
		plan->images[1] = take(&c, img);
	}
	plan->flags = take(&c, GPU_POOL_ALIGN);
	struct gpu_loss_layout loss;
	gpu_pool_loss_layout(n, tensor_elems(&d->tensors[d->output_tensor]), &loss);
	c.overflow |= loss.bytes == 0;
	plan->loss = take(&c, loss.bytes);
	plan->workspace = take(&c, in->workspace_bytes);
	if (c.overflow) {
		gpu_pool_plan_free(plan);
		return trainer_error_set(err, "gpu: pool plan: batch %d: size overflows", in->batch);
	}
	plan->total_bytes = c.next;
	return 0;
}

void gpu_pool_plan_free(struct gpu_pool_plan *plan)
{
	free(plan->act);
	free(plan->act_bwd);
	free(plan->rebuild);
	free(plan->grad);
	free(plan->bn_stats);
	free(plan->bn_known);
	plan->act = plan->act_bwd = plan->grad = plan->bn_stats = NULL;
	plan->rebuild = NULL;
	plan->bn_known = NULL;
}

static int plan_bytes(const struct model_desc *d, const struct gpu_pool_inputs *like,
		      long batch, size_t *bytes, struct trainer_error *err)
{
	struct gpu_pool_inputs in = *like;
	struct gpu_pool_plan plan;

	in.batch = (int)batch;
	if (gpu_pool_plan_build(d, &in, &plan, err))
		return -1;
	*bytes = plan.total_bytes;
	gpu_pool_plan_free(&plan);
	return 0;
}

/* Binary search on the exact plan (monotonic in N), so rounding to
 * GPU_POOL_ALIGN can never make the answer one too large. */
long gpu_pool_largest_batch(const struct model_desc *d, const struct gpu_pool_inputs *like,
			    size_t free_bytes, size_t reserve_bytes, long limit,
			    struct trainer_error *err)
{
	size_t budget = free_bytes > reserve_bytes ? free_bytes - reserve_bytes : 0, bytes;
	long lo = 0, hi = limit;

	if (limit < 1 || limit > INT32_MAX)
		return trainer_error_set(err, "gpu: largest batch: limit %ld: invalid", limit);
	while (lo < hi) {
		long mid = lo + (hi - lo + 1) / 2;
		if (plan_bytes(d, like, mid, &bytes, err))
			return -1;
		if (bytes <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static double mib(size_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

int gpu_pool_fit_check(size_t need_bytes, size_t free_bytes, size_t reserve_bytes,
		       int batch, long largest_batch, int device, struct trainer_error *err)
{
	size_t budget = free_bytes > reserve_bytes ? free_bytes - reserve_bytes : 0;

	if (need_bytes <= budget)
		return 0;
	if (largest_batch < 1)
		return trainer_error_set(err, "--batch: '%d': needs %.0f MiB on GPU %d, %.0f MiB free "
					 "(%.0f MiB kept for cuDNN/cuBLAS): not even batch 1 fits",
					 batch, mib(need_bytes), device, mib(free_bytes), mib(reserve_bytes));
	return trainer_error_set(err, "--batch: '%d': needs %.0f MiB on GPU %d, %.0f MiB free "
				 "(%.0f MiB kept for cuDNN/cuBLAS): hint: --batch %ld fits",
				 batch, mib(need_bytes), device, mib(free_bytes), mib(reserve_bytes),
				 largest_batch);
}
