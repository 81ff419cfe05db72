/* cpu_plan.c - how the cpu backend lays out one model for one batch size:
 * each tensor's layout and buffers, each layer's primitives (through the
 * layer files' setup), and one arena for everything whose lifetime is a
 * part of a step (gradients, layout temporaries, and with
 * --memory-efficient the BN(+ReLU) outputs that backward recomputes).
 * What it does not do: run anything (backend_cpu.c) or describe a slice in
 * a layout (layout.c).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/arena.h"

int cpu_err(struct cpu_exec *x, struct trainer_error *err)
{
	const char *m = x->ctx.err;
	if (strncmp(m, "chexnet: ", 9) == 0)
		m += 9;
	return trainer_error_set(err, "%s", m[0] ? m : "cpu: unknown oneDNN failure");
}

static int layer_needs_images(const struct model_layer *l)
{
	switch (l->kind) {
	case LAYER_CONV:
		return l->kernel != 1 || l->stride != 1 || l->pad != 0;
	case LAYER_MAXPOOL:
		return 1;
	case LAYER_AVGPOOL:
	case LAYER_GLOBAL_AVGPOOL:
		/* windows inside one image even with the batch stacked in H */
		return l->pad != 0 || l->in_h % l->out_h || l->in_w % l->out_w ||
		       l->in_h / l->out_h != l->in_w / l->out_w;
	default:
		return 0;
	}
}

/* Whether l reads or writes all of tensor t, not a channel slice of it: an
 * image op on a slice moves it through a temporary in either layout, so
 * only whole-tensor image ops decide the layout. */
static int whole(const struct tensor_slice *s, const struct cpu_tensor *t)
{
	return s->c0 == 0 && s->channels == t->c;
}

static int needs_images_whole(const struct model_layer *l, int ti, const struct cpu_tensor *t)
{
	if (!layer_needs_images(l))
		return 0;
	return (l->in.tensor == ti && whole(&l->in, t)) ||
	       (l->out.tensor == ti && whole(&l->out, t)) ||
	       (l->kind == LAYER_ADD && l->in2.tensor == ti && whole(&l->in2, t));
}

static int touches(const struct model_layer *l, int t)
{
	return l->in.tensor == t || l->out.tensor == t ||
	       (l->kind == LAYER_ADD && l->in2.tensor == t);
}

static void choose_layout(struct cpu_exec *x, int ti)
{
	const struct model_desc *d = &x->m->desc;
	struct cpu_tensor *t = &x->t[ti];
	const struct model_tensor *mt = &d->tensors[ti];
	t->n = x->n, t->c = mt->channels, t->h = mt->height, t->w = mt->width;
	t->dt = x->dt;
	t->layout = CPU_STACKED;
	t->producer = -1;
	t->last_reader = -1;
	if (ti == d->input_tensor || mt->channels % x->ctx.isa.block) {
		t->layout = ti == d->input_tensor ? CPU_NCHW32 : CPU_BLOCKED;
	}
	for (int i = 0; i < d->layer_count; i++) {
		const struct model_layer *l = &d->layers[i];
		if (!touches(l, ti))
			continue;
		if (l->out.tensor == ti) {
			if (t->producer < 0)
				t->producer = i;
			if (l->kind == LAYER_LINEAR)
				t->layout = CPU_NCHW32;
		} else {
			t->last_reader = i;
		}
		if (t->layout == CPU_STACKED && needs_images_whole(l, ti, t))
			t->layout = CPU_BLOCKED;
	}
	if (t->layout == CPU_NCHW32)
		t->dt = dnnl_f32;
	md_t md;
	if (t->layout == CPU_NCHW32)
		md_nchw(&md, t->n, t->c, t->h, t->w, t->dt);
	else
		md_blocked(&md, t->n, t->c, t->h, t->w, t->dt, x->ctx.isa.block);
	t->bytes = md_bytes(&md);
}

/* Memory-efficient mode: a BN(+ReLU) or ReLU output that only feeds later
 * layers is rebuilt in backward instead of kept (Pleiss et al. 2017). */
static void choose_recompute(struct cpu_exec *x)
{
	const struct model_desc *d = &x->m->desc;
	for (int ti = 0; ti < d->tensor_count; ti++) {
		struct cpu_tensor *t = &x->t[ti];
		t->recompute = 0;
		if (!x->opt.memory_efficient || t->producer < 0 || ti == d->output_tensor ||
		    d->tensors[ti].kind != TENSOR_PLAIN)
			continue;
		const struct model_layer *p = &d->layers[t->producer];
		if ((p->kind == LAYER_BATCHNORM || p->kind == LAYER_RELU) &&
		    !x->t[p->in.tensor].recompute && p->in.tensor != ti)
			t->recompute = 1;
	}
}

static const struct cpu_layer_ops *ops_for(const struct model_layer *l)
{
	switch (l->kind) {
	case LAYER_CONV: return &cpu_conv_ops;
	case LAYER_BATCHNORM: return &cpu_bnorm_ops;
	case LAYER_RELU: return &cpu_relu_ops;
	case LAYER_ADD: return &cpu_add_ops;
	case LAYER_MAXPOOL: return &cpu_maxpool_ops;
	case LAYER_AVGPOOL:
	case LAYER_GLOBAL_AVGPOOL: return &cpu_avgpool_ops;
	case LAYER_LINEAR: return &cpu_linear_ops;
	}
	return NULL;
}

static void *alloc64(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
		return NULL;
	return p;
}

static int bwd_step(const struct cpu_exec *x, int layer)
{
	return x->m->desc.layer_count + (x->m->desc.layer_count - 1 - layer);
}

static void tensor_requests(struct cpu_exec *x, struct arena_plan *a, int ti, long *id)
{
	const struct model_desc *d = &x->m->desc;
	struct cpu_tensor *t = &x->t[ti];
	int L = d->layer_count, first = 2 * L, last = L;
	for (int i = 0; i < L; i++) {
		const struct model_layer *l = &d->layers[i];
		if ((l->in.tensor == ti || (l->kind == LAYER_ADD && l->in2.tensor == ti)) &&
		    bwd_step(x, i) < first)
			first = bwd_step(x, i);
		if (l->out.tensor == ti && bwd_step(x, i) > last)
			last = bwd_step(x, i);
	}
	if (ti == d->output_tensor)
		first = L;
	if (ti == d->input_tensor)
		last = 2 * L;
	id[0] = arena_add(a, t->bytes, first, last);
	id[1] = id[2] = -1;
	if (t->recompute) {
		id[1] = arena_add(a, t->bytes, t->producer, t->last_reader);
		id[2] = arena_add(a, t->bytes, bwd_step(x, t->last_reader),
				  bwd_step(x, t->producer));
	}
}

/* Temporaries live for one layer's forward or backward; a recomputed
 * tensor's producer also runs (forward) inside its last reader's backward,
 * and a recomputed BN's workspace lives like its output. */
static void layer_requests(struct cpu_exec *x, struct arena_plan *a, int i, long id[][CPU_MAX_TEMPS],
			   long *ws_id)
{
	struct cpu_layer *l = &x->l[i];
	const struct cpu_tensor *out = &x->t[l->ml->out.tensor];
	int rstep = out->recompute ? bwd_step(x, out->last_reader) : 0;
	for (int k = 0; k < CPU_MAX_TEMPS; k++) {
		id[0][k] = arena_add(a, l->temp_bytes[k], i, i);
		id[1][k] = arena_add(a, l->temp_bytes[k], bwd_step(x, i), bwd_step(x, i));
		id[2][k] = out->recompute ? arena_add(a, l->temp_bytes[k], rstep, rstep) : -1;
	}
	ws_id[0] = ws_id[1] = -1;
	if (out->recompute && l->ws_bytes) {
		ws_id[0] = arena_add(a, l->ws_bytes, i, out->last_reader);
		ws_id[1] = arena_add(a, l->ws_bytes, rstep, bwd_step(x, i));
	}
}

static int plan_arena(struct cpu_exec *x)
{
	const struct model_desc *d = &x->m->desc;
	struct arena_plan a;
	int T = d->tensor_count, L = d->layer_count, rc = -1;
	long (*tid)[3] = calloc(T, sizeof(*tid));
	long (*lid)[3][CPU_MAX_TEMPS] = calloc(L, sizeof(*lid));
	long (*wid)[2] = calloc(L, sizeof(*wid));
	arena_plan_init(&a);
	if (!tid || !lid || !wid)
		goto out;
	for (int ti = 0; ti < T; ti++)
		tensor_requests(x, &a, ti, tid[ti]);
	for (int i = 0; i < L; i++)
		layer_requests(x, &a, i, lid[i], wid[i]);
	if (arena_plan_solve(&a, &x->arena_bytes))
		goto out;
	for (int ti = 0; ti < T; ti++) {
		x->t[ti].grad_off = (long)arena_offset(&a, tid[ti][0]);
		x->t[ti].act_off[0] = tid[ti][1] < 0 ? -1 : (long)arena_offset(&a, tid[ti][1]);
		x->t[ti].act_off[1] = tid[ti][2] < 0 ? -1 : (long)arena_offset(&a, tid[ti][2]);
	}
	for (int i = 0; i < L; i++) {
		for (int p = 0; p < 3; p++)
			for (int k = 0; k < CPU_MAX_TEMPS; k++)
				x->l[i].temp_off[p][k] = lid[i][p][k] < 0 ? -1 :
					(long)arena_offset(&a, lid[i][p][k]);
		for (int p = 0; p < 2; p++)
			x->l[i].ws_off[p] = wid[i][p] < 0 ? -1 : (long)arena_offset(&a, wid[i][p]);
	}
	rc = 0;
out:
	arena_plan_free(&a);
	free(tid);
	free(lid);
	free(wid);
	return rc;
}

void cpu_bind_temps(struct cpu_exec *x, struct cpu_layer *l, int phase)
{
	for (int k = 0; k < CPU_MAX_TEMPS; k++)
		l->temp[k] = l->temp_off[phase][k] >= 0 && l->temp_bytes[k] ?
			     x->arena + l->temp_off[phase][k] : NULL;
	int wp = phase == 0 ? 0 : 1;
	if (l->ws_off[wp] >= 0)
		l->ws = x->arena + l->ws_off[wp];
}

void cpu_bind_phase(struct cpu_exec *x, int phase)
{
	for (int ti = 0; ti < x->m->desc.tensor_count; ti++) {
		struct cpu_tensor *t = &x->t[ti];
		t->grad = x->arena + t->grad_off;
		if (t->recompute)
			t->act = x->arena + t->act_off[phase ? 1 : 0];
	}
}

static int alloc_persistent(struct cpu_exec *x)
{
	for (int ti = 0; ti < x->m->desc.tensor_count; ti++) {
		struct cpu_tensor *t = &x->t[ti];
		if (!t->recompute && !(t->act = alloc64(t->bytes)))
			return dnnl_ctx_fail(&x->ctx, "tensor '%s': '%zu bytes': out of memory",
					     x->m->desc.tensors[ti].name, t->bytes);
		x->persist_bytes += t->recompute ? 0 : t->bytes;
	}
	for (int i = 0; i < x->m->desc.layer_count; i++) {
		struct cpu_layer *l = &x->l[i];
		if (l->ws_bytes && !x->t[l->ml->out.tensor].recompute) {
			if (!(l->ws = alloc64(l->ws_bytes)))
				return dnnl_ctx_fail(&x->ctx, "workspace: '%zu bytes': out of memory",
						     l->ws_bytes);
			x->persist_bytes += l->ws_bytes;
		}
	}
	if (!(x->arena = alloc64(x->arena_bytes)))
		return dnnl_ctx_fail(&x->ctx, "arena: '%zu bytes': out of memory", x->arena_bytes);
	return 0;
}

void cpu_plan_free(struct cpu_exec *x)
{
	const struct model_desc *d = &x->m->desc;
	for (int ti = 0; x->t && ti < d->tensor_count; ti++)
		if (!x->t[ti].recompute)
			free(x->t[ti].act);
	for (int i = 0; x->l && i < d->layer_count; i++) {
		struct cpu_layer *l = &x->l[i];
		if (l->ws_off[0] < 0)
			free(l->ws);
		free(l->weights);
		free(l->weights_bwd);
		free(l->mean);
		free(l->var);
	}
	free(x->t);
	free(x->l);
	free(x->arena);
	free(x->x_nchw);
	x->t = NULL;
	x->l = NULL;
	x->arena = NULL;
	x->x_nchw = NULL;
	x->n = 0;
	x->persist_bytes = x->arena_bytes = 0;
}

int cpu_plan_build(struct cpu_exec *x, int n, struct trainer_error *err)
{
	const struct model_desc *d = &x->m->desc;
	cpu_plan_free(x);
	x->n = n;
	x->t = calloc(d->tensor_count, sizeof(*x->t));
	x->l = calloc(d->layer_count, sizeof(*x->l));
	if (!x->t || !x->l)
		return trainer_error_set(err, "cpu: plan: out of memory");
	for (int ti = 0; ti < d->tensor_count; ti++)
		choose_layout(x, ti);
	choose_recompute(x);
	for (int i = 0; i < d->layer_count; i++) {
		struct cpu_layer *l = &x->l[i];
		l->ml = &d->layers[i];
		l->index = i;
		l->ws_off[0] = l->ws_off[1] = -1;
		l->ops = ops_for(l->ml);
		l->skip_dx = l->ml->in.tensor == d->input_tensor && !x->want_dx;
		if (!l->ops)
			return trainer_error_set(err, "cpu: layer '%s': kind %d not supported",
						 l->ml->name, (int)l->ml->kind);
		if (l->ops->setup(x, l))
			return cpu_err(x, err);
	}
	if (plan_arena(x))
		return trainer_error_set(err, "cpu: plan: out of memory");
	const struct model_tensor *in = &d->tensors[d->input_tensor];
	x->x_nchw = alloc64(sizeof(float) * (size_t)n * in->channels * in->height * in->width);
	if (!x->x_nchw || alloc_persistent(x))
		return x->x_nchw ? cpu_err(x, err) : trainer_error_set(err, "cpu: plan: out of memory");
	for (int i = 0; i < d->layer_count; i++)
		if (x->l[i].ops->load && x->l[i].ops->load(x, &x->l[i]))
			return cpu_err(x, err);
	return dnnl_ctx_scratch_ready(&x->ctx) ? cpu_err(x, err) : 0;
}
