/* backend_cpu.c - the "cpu" backend's ops table: oneDNN 2.6, fp32 or bf16
 * (AMX) with fp32 master weights and BN statistics, blocked layouts end to
 * end (cpu_plan.c), primitives created once (prim_cache.c), OpenMP
 * threads = the allowed CPUs or --threads. The forward runs the layers in
 * order; the backward in reverse, rebuilding --memory-efficient BN(+ReLU)
 * outputs just before their last reader's backward, and reports each
 * layer's parameter range as soon as its gradient is final.
 * The training loss is kept on the host (host_loss.h, M3).
 * What it does not do: the loss formula or the optimizer (host code).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "model/input_norm.h"
#include "backend/cpu/backend_cpu.h"
#include "backend/host_loss.h"

struct backend {
	struct cpu_exec x;
	struct host_loss loss;
};

static int ensure_plan(struct cpu_exec *x, int n, int want_dx, struct trainer_error *err)
{
	if (n < 1 || n > x->opt.max_batch)
		return trainer_error_set(err, "cpu: batch: '%d': expected 1..%d", n, x->opt.max_batch);
	if (x->n == n && x->want_dx == want_dx)
		return 0;
	x->want_dx = want_dx;
	return cpu_plan_build(x, n, err);
}

static void cpu_destroy(struct backend *b)
{
	if (!b)
		return;
	cpu_plan_free(&b->x);
	dnnl_ctx_free(&b->x.ctx);
	host_loss_free(&b->loss);
	free(b);
}

/* bf16 where oneDNN has no bf16 kernels is refused from the ISA, before
 * any work: never a failure at the first primitive, never silently slow.
 * native_only (the probe behind --precision auto) also refuses bf16 that
 * avx512_core only emulates, slower than fp32 (the cpu README's bench). */
static int check_precision(const struct cpu_isa *isa, enum precision p, int native_only,
			   struct trainer_error *err)
{
	char where[128];
	if (precision_check(p, "cpu", err))
		return -1;
	if (precision_storage(p) == PRECISION_FP32 || (isa->bf16 && (isa->bf16_native || !native_only)))
		return 0;
	cpu_isa_where(isa, where, sizeof(where));
	if (isa->bf16)
		return trainer_error_set(err, "--precision bf16: %s: bf16 only emulated, slower "
					 "than fp32", where);
	return trainer_error_set(err, "--precision bf16: %s: no bf16 kernels: use "
				 "--precision fp32", where);
}

static int cpu_probe(const struct backend_options *opt, char *what, size_t len,
		     struct trainer_error *err)
{
	dnnl_engine_t engine;
	struct cpu_isa isa;
	if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
		return trainer_error_set(err, "cpu: engine: oneDNN could not create a CPU engine");
	cpu_isa_probe(engine, &isa);
	dnnl_engine_destroy(engine);
	cpu_isa_describe(&isa, what, len);
	return check_precision(&isa, opt->precision, opt->native_only, err);
}

static struct backend *cpu_create(struct model *m, const struct backend_options *opt,
				  struct trainer_error *err)
{
	struct backend *b = calloc(1, sizeof(*b));
	if (!b) {
		trainer_error_set(err, "cpu: backend: out of memory");
		return NULL;
	}
	struct cpu_exec *x = &b->x;
	host_loss_init(&b->loss, "cpu");
	x->m = m;
	x->opt = *opt;
	x->dt = precision_storage(opt->precision) == PRECISION_BF16 ? dnnl_bf16 : dnnl_f32;
	if (dnnl_ctx_init(&x->ctx, opt->threads)) {
		cpu_err(x, err);
		cpu_destroy(b);
		return NULL;
	}
	if (check_precision(&x->ctx.isa, opt->precision, 0, err)) {
		cpu_destroy(b);
		return NULL;
	}
	if (ensure_plan(x, opt->max_batch, 0, err)) {
		cpu_destroy(b);
		return NULL;
	}
	return b;
}

static int cpu_load_params(struct backend *b, struct trainer_error *err)
{
	struct cpu_exec *x = &b->x;
	for (int i = 0; i < x->m->desc.layer_count; i++)
		if (x->l[i].ops->load && x->l[i].ops->load(x, &x->l[i]))
			return cpu_err(x, err);
	return 0;
}

static int put_input(struct cpu_exec *x, const struct backend_input *in, struct trainer_error *err)
{
	const struct model_desc *d = &x->m->desc;
	const struct model_tensor *t = &d->tensors[d->input_tensor];
	float *dst = (float *)x->t[d->input_tensor].act;
	if (in->images) {
		if (t->channels != 3 || in->images->size != t->height || t->height != t->width)
			return trainer_error_set(err, "cpu: input: '%dx%d images': the model "
						 "expects 3x%dx%d", in->images->size,
						 in->images->size, t->height, t->width);
		input_norm_nchw(in->images, in->count, dst);
		return 0;
	}
	memcpy(dst, in->x, sizeof(float) * (size_t)in->count * t->channels * t->height * t->width);
	return 0;
}

static int get_output(struct cpu_exec *x, int tensor, int grad, float *y)
{
	const struct cpu_tensor *t = &x->t[tensor];
	struct tensor_slice s = { tensor, 0, t->c };
	md_t md;
	char *p;
	md_nchw(&md, t->n, t->c, t->h, t->w, dnnl_f32);
	if (cpu_fetch(x, &s, grad, &md, (char *)y, &p))
		return -1;
	if (p != (char *)y)
		memcpy(y, p, md_bytes(&md));
	return 0;
}

static int run_forward(struct backend *b, const struct backend_input *in, int training,
		       float *y, struct trainer_error *err)
{
	struct cpu_exec *x = &b->x;
	const struct model_tensor *ot = &x->m->desc.tensors[x->m->desc.output_tensor];
	if (ensure_plan(x, in->count, in->x != NULL, err) || put_input(x, in, err))
		return -1;
	y = host_loss_output(&b->loss, y, in->count, ot->channels * ot->height * ot->width,
			     training, err);
	if (!y)
		return -1;
	cpu_bind_phase(x, 0);
	for (int i = 0; i < x->m->desc.layer_count; i++) {
		struct cpu_layer *l = &x->l[i];
		cpu_bind_temps(x, l, 0);
		if (l->ops->forward(x, l, training ? 1 : 0))
			return cpu_err(x, err);
	}
	return get_output(x, x->m->desc.output_tensor, 0, y) ? cpu_err(x, err) : 0;
}

/* A forward that fails keeps nothing: loss() and backward (dy NULL) then
 * refuse instead of using an earlier forward's logits or gradient. */
static int cpu_forward(struct backend *b, const struct backend_input *in, int training,
		       float *y, struct trainer_error *err)
{
	host_loss_discard(&b->loss);
	if (run_forward(b, in, training, y, err) == 0)
		return 0;
	host_loss_discard(&b->loss);
	return -1;
}

/* Memory-efficient: rebuild the recomputed inputs of layer i if it is
 * their last reader (the first to need them in backward). */
static int recompute_inputs(struct cpu_exec *x, int i)
{
	const struct model_layer *ml = x->l[i].ml;
	int ins[2] = { ml->in.tensor, ml->kind == LAYER_ADD ? ml->in2.tensor : -1 };
	for (int k = 0; k < 2; k++) {
		if (ins[k] < 0 || (k == 1 && ins[1] == ins[0]))
			continue;
		struct cpu_tensor *t = &x->t[ins[k]];
		if (!t->recompute || t->last_reader != i)
			continue;
		struct cpu_layer *p = &x->l[t->producer];
		cpu_bind_temps(x, p, 2);
		if (p->ops->forward(x, p, 2))
			return -1;
	}
	return 0;
}

static int cpu_backward(struct backend *b, const float *dy, float *dx,
			backend_grad_ready_fn ready, void *user, struct trainer_error *err)
{
	struct cpu_exec *x = &b->x;
	const struct model_desc *d = &x->m->desc;
	const struct cpu_tensor *ot = &x->t[d->output_tensor];
	struct tensor_slice os = { d->output_tensor, 0, ot->c };
	md_t md;
	if (dx && !x->want_dx)
		return trainer_error_set(err, "cpu: backward: 'dx': the forward ran on images");
	if (!(dy = host_loss_grad(&b->loss, dy, err)))
		return -1;
	cpu_bind_phase(x, 1);
	md_nchw(&md, ot->n, ot->c, ot->h, ot->w, dnnl_f32);
	if (cpu_store(x, &os, 1, 0, &md, (char *)dy))
		return cpu_err(x, err);
	for (int i = d->layer_count - 1; i >= 0; i--) {
		struct cpu_layer *l = &x->l[i];
		if (recompute_inputs(x, i))
			return cpu_err(x, err);
		cpu_bind_temps(x, l, 1);
		if (l->ops->backward(x, l))
			return cpu_err(x, err);
		if (ready && l->ml->weight_count)
			ready(l->ml->weight_offset, l->ml->weight_count + l->ml->bias_count, user);
	}
	if (dx && get_output(x, d->input_tensor, 1, dx))
		return cpu_err(x, err);
	return 0;
}

static int cpu_store_state(struct backend *b, struct trainer_error *err)
{
	return 0;
}

static int cpu_loss(struct backend *b, const float *labels, const float *w_pos,
		    const float *w_neg, struct trainer_error *err)
{
	return host_loss_compute(&b->loss, labels, w_pos, w_neg, err);
}

static int cpu_loss_take(struct backend *b, double *sum, long *batches, struct trainer_error *err)
{
	host_loss_take(&b->loss, sum, batches);
	return 0;
}

/* The last forward's feature maps, reordered to NCHW fp32 (from bf16
 * too). A --memory-efficient tensor lives in the step arena and may be
 * overwritten after its last reader: refused, never stale. */
static int cpu_features(struct backend *b, float *maps, struct trainer_error *err)
{
	struct cpu_exec *x = &b->x;
	struct model_features f;

	if (model_features_find(&x->m->desc, &f, err))
		return -1;
	if (x->t[f.tensor].recompute)
		return trainer_error_set(err, "cpu: features: '%s': not kept with --memory-efficient",
					 x->m->desc.tensors[f.tensor].name);
	return get_output(x, f.tensor, 0, maps) ? cpu_err(x, err) : 0;
}

static void cpu_libraries(char *out, size_t len)
{
	const dnnl_version_t *v = dnnl_version();

	snprintf(out, len, "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
}

const struct backend_ops backend_cpu_ops = {
	.name = "cpu",
	.probe = cpu_probe,
	.libraries = cpu_libraries,
	.create = cpu_create,
	.load_params = cpu_load_params,
	.forward = cpu_forward,
	.backward = cpu_backward,
	.loss = cpu_loss,
	.loss_take = cpu_loss_take,
	.store_state = cpu_store_state,
	.features = cpu_features,
	.destroy = cpu_destroy,
};

int cpu_backend_primitives(struct backend *b,
			   void (*fn)(const char *what, const char *impl, void *user),
			   void *user)
{
	int n = prim_cache_count(b->x.ctx.cache);
	for (int i = 0; i < n; i++) {
		struct prim *p = prim_cache_at(b->x.ctx.cache, i);
		fn(p->what, dnnl_pd_impl(p->pd), user);
	}
	return n;
}

void cpu_backend_profile_start(struct backend *b)
{
	int n = prim_cache_count(b->x.ctx.cache);
	for (int i = 0; i < n; i++) {
		struct prim *p = prim_cache_at(b->x.ctx.cache, i);
		p->seconds = 0;
		p->calls = 0;
	}
	prim_profile = 1;
}

static int by_seconds(const void *a, const void *b)
{
	const struct prim *pa = *(struct prim *const *)a, *pb = *(struct prim *const *)b;
	return pa->seconds < pb->seconds ? 1 : pa->seconds > pb->seconds ? -1 : 0;
}

/* The kind is the descriptor text up to the layer name's quote. */
static void kind_of(const char *what, char *kind, size_t len)
{
	const char *q = strchr(what, '\'');
	size_t n = q ? (size_t)(q - what) : strlen(what);
	if (strncmp(what, "reorder", 7) == 0)
		n = strcspn(what, " ") ;
	snprintf(kind, len, "%.*s", (int)(n < len ? n : len - 1), what);
}

void cpu_backend_profile_print(struct backend *b, FILE *f, int top)
{
	int n = prim_cache_count(b->x.ctx.cache);
	struct prim **v = calloc(n + 1, sizeof(*v));
	char kinds[32][64];
	double ksec[32] = { 0 }, total = 0;
	int nk = 0;
	if (!v)
		return;
	for (int i = 0; i < n; i++) {
		v[i] = prim_cache_at(b->x.ctx.cache, i);
		total += v[i]->seconds;
		char k[64];
		kind_of(v[i]->what, k, sizeof(k));
		int j = 0;
		while (j < nk && strcmp(kinds[j], k))
			j++;
		if (j == nk && nk < 32)
			snprintf(kinds[nk++], sizeof(kinds[0]), "%s", k);
		if (j < 32)
			ksec[j] += v[i]->seconds;
	}
	qsort(v, n, sizeof(*v), by_seconds);
	fprintf(f, "profile: %.3f s in %d primitives\nby kind:\n", total, n);
	for (int j = 0; j < nk; j++)
		fprintf(f, "  %7.3f s %5.1f%%  %s\n", ksec[j], 100 * ksec[j] / (total > 0 ? total : 1),
			kinds[j]);
	fprintf(f, "top primitives:\n");
	for (int i = 0; i < n && i < top; i++)
		fprintf(f, "  %7.3f s %5.1f%% %5ld calls  %s [%s]\n", v[i]->seconds,
			100 * v[i]->seconds / (total > 0 ? total : 1), v[i]->calls, v[i]->what,
			dnnl_pd_impl(v[i]->pd));
	free(v);
	prim_profile = 0;
}

void cpu_backend_memory(struct backend *b, size_t *persist_bytes, size_t *arena_bytes)
{
	*persist_bytes = b->x.persist_bytes;
	*arena_bytes = b->x.arena_bytes;
}

long cpu_backend_moves(struct backend *b)
{
	return b->x.moves;
}
