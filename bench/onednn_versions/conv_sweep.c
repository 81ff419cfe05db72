/* conv_sweep.c - every convolution of a DenseNet-121 training step (224 px,
 * batch 16: the stem, 58 dense layers' 1x1 and 3x3, 3 transitions) run
 * forward, backward-data and backward-weights on whichever oneDNN this is
 * built against (2.x or 3.x C API), each on the layouts oneDNN picks
 * (format any), as a step would. Prints one line per pass:
 * `version V isa I dtype D fwd MS bwd_data MS bwd_weights MS total MS`
 * and, with -v, the implementation of each distinct shape. LAYOUT=nhwc
 * puts every activation in NHWC instead (PyTorch's channels_last; where
 * oneDNN's brgemm kernels run), weights still format any.
 * bench/onednn_versions/run.sh builds it twice and alternates the two.
 * What it does not do: batch norm, ReLU, pooling or concatenation (memory
 * bound, the same code in both versions), or check results.
 * usage: conv_sweep f32|bf16 PASSES [-v]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oneapi/dnnl/dnnl.h>

#define BATCH 16

struct shape { int ic, oc, hw, k, s, count; };

/* n: BATCH for activations, the output channels for weights */
static dnnl_format_tag_t activation_tag(int n)
{
	const char *l = getenv("LAYOUT");
	return n == BATCH && l && !strcmp(l, "nhwc") ? dnnl_nhwc : dnnl_format_tag_any;
}

#if DNNL_VERSION_MAJOR >= 3
typedef dnnl_memory_desc_t md_t;
typedef const_dnnl_memory_desc_t cmd_t;
static md_t md_any(int n, int c, int h, int w, dnnl_data_type_t dt)
{
	dnnl_dims_t d = { n, c, h, w };
	md_t md = NULL;
	dnnl_memory_desc_create_with_tag(&md, 4, d, dt, activation_tag(n));
	return md;
}
static void md_free(md_t md) { dnnl_memory_desc_destroy(md); }
#else
typedef dnnl_memory_desc_t *md_t;
typedef const dnnl_memory_desc_t *cmd_t;
static md_t md_any(int n, int c, int h, int w, dnnl_data_type_t dt)
{
	dnnl_dims_t d = { n, c, h, w };
	md_t md = calloc(1, sizeof(*md));
	if (md)
		dnnl_memory_desc_init_by_tag(md, 4, d, dt, activation_tag(n));
	return md;
}
static void md_free(md_t md) { free(md); }
#endif

/* kind 0 forward, 1 backward data, 2 backward weights */
static dnnl_status_t conv_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t e, int kind, md_t src,
			     md_t wei, md_t dwei, md_t dst, const struct shape *s,
			     const_dnnl_primitive_desc_t hint)
{
	dnnl_dims_t st = { s->s, s->s }, pad = { s->k / 2, s->k / 2 };
#if DNNL_VERSION_MAJOR >= 3
	dnnl_dims_t dil = { 0, 0 };
	if (kind == 0)
		return dnnl_convolution_forward_primitive_desc_create(pd, e, dnnl_forward_training,
			dnnl_convolution_direct, src, wei, NULL, dst, st, dil, pad, pad, NULL);
	if (kind == 1)
		return dnnl_convolution_backward_data_primitive_desc_create(pd, e,
			dnnl_convolution_direct, src, wei, dst, st, dil, pad, pad, hint, NULL);
	return dnnl_convolution_backward_weights_primitive_desc_create(pd, e,
		dnnl_convolution_direct, src, dwei, NULL, dst, st, dil, pad, pad, hint, NULL);
#else
	dnnl_convolution_desc_t d;
	dnnl_status_t r;
	if (kind == 0)
		r = dnnl_convolution_forward_desc_init(&d, dnnl_forward_training,
			dnnl_convolution_direct, src, wei, NULL, dst, st, pad, pad);
	else if (kind == 1)
		r = dnnl_convolution_backward_data_desc_init(&d, dnnl_convolution_direct, src, wei,
			dst, st, pad, pad);
	else
		r = dnnl_convolution_backward_weights_desc_init(&d, dnnl_convolution_direct, src,
			dwei, NULL, dst, st, pad, pad);
	return r ? r : dnnl_primitive_desc_create(pd, &d, NULL, e, hint);
#endif
}

/* One shape's three primitives and their buffers. */
struct conv {
	const struct shape *s;
	dnnl_primitive_desc_t pd[3];
	dnnl_primitive_t p[3];
	int nargs[3];
	dnnl_exec_arg_t args[3][3];
	double ms[3];
};

static const int arg_ids[3][3] = {
	{ DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST },
	{ DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST },
	{ DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST },
};

static int conv_make(struct conv *c, dnnl_engine_t e, dnnl_data_type_t dt)
{
	const struct shape *s = c->s;
	int oh = (s->hw + 2 * (s->k / 2) - s->k) / s->s + 1;
	md_t src = md_any(BATCH, s->ic, s->hw, s->hw, dt), dst = md_any(BATCH, s->oc, oh, oh, dt);
	md_t wei = md_any(s->oc, s->ic, s->k, s->k, dt);
	md_t dwei = md_any(s->oc, s->ic, s->k, s->k, dnnl_f32);
	int rc = 0;
	for (int k = 0; k < 3 && !rc; k++) {
		rc = conv_pd(&c->pd[k], e, k, src, wei, dwei, dst, s, k ? c->pd[0] : NULL) ||
		     dnnl_primitive_create(&c->p[k], c->pd[k]);
		for (int a = 0; a < 3 && !rc; a++) {
			cmd_t md = dnnl_primitive_desc_query_md(c->pd[k],
				dnnl_query_exec_arg_md, arg_ids[k][a]);
			c->args[k][a].arg = arg_ids[k][a];
			rc = dnnl_memory_create(&c->args[k][a].memory, md, e, DNNL_MEMORY_ALLOCATE);
			void *h = NULL;
			if (!rc && !dnnl_memory_get_data_handle(c->args[k][a].memory, &h) && h)
				memset(h, 0x3c, dnnl_memory_desc_get_size(md));  /* finite, ~0.01 */
		}
		c->nargs[k] = 3;
	}
	md_free(src), md_free(dst), md_free(wei), md_free(dwei);
	return rc;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static const char *isa_name(void)
{
	static char other[16];
	switch (dnnl_get_effective_cpu_isa()) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default:
		snprintf(other, sizeof(other), "isa-%d", (int)dnnl_get_effective_cpu_isa());
		return other;
	}
}

static const char *impl(const_dnnl_primitive_desc_t pd)
{
	const char *s = "?";
	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s);
	return s;
}

/* DenseNet-121: blocks of 6, 12, 24, 16 layers, growth 32, bottleneck 128. */
static int densenet121(struct shape *out)
{
	static const int layers[4] = { 6, 12, 24, 16 };
	int n = 0, c = 64, hw = 56;
	out[n++] = (struct shape){ 3, 64, 224, 7, 2, 1 };
	for (int b = 0; b < 4; b++) {
		for (int i = 0; i < layers[b]; i++) {
			out[n++] = (struct shape){ c + 32 * i, 128, hw, 1, 1, 1 };
			out[n++] = (struct shape){ 128, 32, hw, 3, 1, 1 };
		}
		c += 32 * layers[b];
		if (b < 3) {
			out[n++] = (struct shape){ c, c / 2, hw, 1, 1, 1 };
			c /= 2;
			hw /= 2;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "f32") && strcmp(argv[1], "bf16"))) {
		fprintf(stderr, "usage: conv_sweep f32|bf16 PASSES [-v]\n");
		return 2;
	}
	dnnl_data_type_t dt = strcmp(argv[1], "bf16") ? dnnl_f32 : dnnl_bf16;
	int passes = atoi(argv[2]), verbose = argc > 3 && strcmp(argv[3], "-v") == 0;
	struct shape shapes[128];
	int n = densenet121(shapes);
	dnnl_engine_t e;
	dnnl_stream_t st;
	struct conv *c = calloc((size_t)n, sizeof(*c));
	if (!c || dnnl_engine_create(&e, dnnl_cpu, 0) || dnnl_stream_create(&st, e, dnnl_stream_default_flags))
		return 1;
	for (int i = 0; i < n; i++) {
		c[i].s = &shapes[i];
		if (conv_make(&c[i], e, dt)) {
			fprintf(stderr, "conv_sweep: conv %d (ic%d oc%d %dx%d k%d): no primitive (%s)\n", i,
				shapes[i].ic, shapes[i].oc, shapes[i].hw, shapes[i].hw, shapes[i].k, argv[1]);
			return 1;
		}
		if (verbose && (i < 3 || shapes[i].hw != shapes[i - 2].hw))
			printf("  ic%d oc%d %dx%d k%d: %s | %s | %s\n", shapes[i].ic, shapes[i].oc,
			       shapes[i].hw, shapes[i].hw, shapes[i].k, impl(c[i].pd[0]), impl(c[i].pd[1]),
			       impl(c[i].pd[2]));
	}
	const dnnl_version_t *v = dnnl_version();
	for (int pass = 0; pass <= passes; pass++) {  /* pass 0 warms up */
		double sum[3] = { 0, 0, 0 };
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 3; k++) {
				if (k == 1 && i == 0)
					continue;  /* the stem has no backward data (its input is the image) */
				double t0 = now_ms();
				if (dnnl_primitive_execute(c[i].p[k], st, c[i].nargs[k], c[i].args[k]) ||
				    dnnl_stream_wait(st))
					return 1;
				sum[k] += now_ms() - t0;
			}
		if (pass)
			printf("version %d.%d.%d isa %s dtype %s fwd %.1f bwd_data %.1f bwd_weights %.1f "
			       "total %.1f\n", v->major, v->minor, v->patch, isa_name(), argv[1], sum[0],
			       sum[1], sum[2], sum[0] + sum[1] + sum[2]);
	}
	return 0;
}
