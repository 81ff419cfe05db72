/* test_model.c - the model descriptions: DenseNet-121 and ResNet-50
 * parameter counts, DenseNet-121's state_dict keys and shapes equal to
 * torchvision's (tests/fixtures/densenet121_state_dict_keys.tsv, listed
 * from torchvision's densenet121), the builder's checks and gradient flags, a small
 * DenseNet's gradients on ref against finite differences, and ref
 * determinism. What it does not test: single layers (test_ref_layers.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "backend/backend.h"
#include "model/loss.h"
#include "model/model.h"
#include "base/rng.h"

static void test_densenet121_parameter_count(void)
{
	struct model_desc d;
	struct trainer_error err = { "" };

	CHECK_MSG(model_by_name(&d, "densenet121", 224, 14, &err) == 0, "%s", err.msg);
	CHECK_INT(d.param_count, 6968206);
	CHECK_STR(d.name, "densenet121");
	CHECK_INT(d.tensors[d.output_tensor].channels, 14);
	model_desc_free(&d);
}

static void test_resnet50_parameter_count(void)
{
	struct model_desc d;
	struct trainer_error err = { "" };

	CHECK_MSG(model_by_name(&d, "resnet50", 224, 14, &err) == 0, "%s", err.msg);
	CHECK_INT(d.param_count, 23536718);
	const struct state_entry *e = model_find_entry(&d, "layer4.2.bn3.running_var");
	CHECK(e && e->count == 2048);
	e = model_find_entry(&d, "layer2.0.downsample.0.weight");
	CHECK(e && e->shape[0] == 512 && e->shape[1] == 256 && e->shape[2] == 1);
	CHECK(model_find_entry(&d, "fc.bias") != NULL);
	model_desc_free(&d);
}

static void shape_text(const struct state_entry *e, char *out, size_t len)
{
	size_t used = (size_t)snprintf(out, len, "[");
	for (int i = 0; i < e->ndim && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%lld", i ? ", " : "",
					 (long long)e->shape[i]);
	snprintf(out + used, len - used, "]");
}

static void test_densenet121_keys_match_torchvision(void)
{
	char *path = test_path(test_src_dir(), "tests/fixtures/densenet121_state_dict_keys.tsv");
	char *text = test_read_file(path, NULL);
	struct model_desc d;
	struct trainer_error err = { "" };
	int row = 0;

	CHECK_MSG(text, "cannot read %s", path);
	CHECK(model_by_name(&d, "densenet121", 224, 14, &err) == 0);
	for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		char key[160], dtype[8], shape[64], mine[64];
		if (sscanf(line, "%159[^\t]\t%7[^\t]\t%63[^\n]", key, dtype, shape) != 3) {
			CHECK_MSG(0, "bad tsv line '%s'", line);
			continue;
		}
		if (row >= d.entry_count) {
			CHECK_MSG(0, "tsv has more keys than the model (%d)", d.entry_count);
			break;
		}
		const struct state_entry *e = &d.entries[row++];
		shape_text(e, mine, sizeof(mine));
		CHECK_MSG(strcmp(e->key, key) == 0, "row %d: key %s, torchvision %s", row, e->key, key);
		CHECK_MSG(strcmp(mine, shape) == 0, "%s: shape %s, torchvision %s", key, mine, shape);
		CHECK_STR(dtype, e->kind == ENTRY_BATCHES_TRACKED ? "I64" : "F32");
	}
	CHECK_INT(row, d.entry_count);
	CHECK_INT(row, 727);
	model_desc_free(&d);
	free(text);
	free(path);
}

static void test_dense_block_is_one_buffer(void)
{
	struct model_desc d;
	struct trainer_error err = { "" };

	CHECK(model_by_name(&d, "densenet121", 224, 14, &err) == 0);
	int concat = 0;
	for (int t = 0; t < d.tensor_count; t++)
		if (d.tensors[t].kind == TENSOR_CONCAT) {
			concat++;
			CHECK(d.tensors[t].channels == 256 || d.tensors[t].channels == 512 ||
			      d.tensors[t].channels == 1024);
		}
	CHECK_INT(concat, 4);
	/* denselayer2.conv2 writes channels [96, 128) of block 1 and adds
	 * into nothing; its norm1 reads [0, 96) and accumulates (later layers
	 * read those channels too) */
	for (int i = 0; i < d.layer_count; i++) {
		const struct model_layer *l = &d.layers[i];
		if (strcmp(l->name, "features.denseblock1.denselayer2.conv2") == 0) {
			CHECK_INT(l->out.c0, 96);
			CHECK_INT(l->out.channels, 32);
		}
		if (strcmp(l->name, "features.denseblock1.denselayer2.norm1") == 0) {
			CHECK_INT(l->in.channels, 96);
			CHECK_INT(l->accumulate_dx, 1);
		}
		if (strcmp(l->name, "features.transition1.norm") == 0)
			CHECK_INT(l->accumulate_dx, 0);
	}
	model_desc_free(&d);
}

static void test_builder_rejects_bad_shapes(void)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct model_layer l;

	model_desc_init(&d, "layer");
	model_desc_add_tensor(&d, "in", TENSOR_PLAIN, 4, 8, 8, &err);
	model_desc_add_tensor(&d, "out", TENSOR_PLAIN, 4, 5, 5, &err);
	memset(&l, 0, sizeof(l));
	l.kind = LAYER_CONV;
	snprintf(l.name, sizeof(l.name), "bad.conv");
	l.kernel = 3;
	l.stride = 1;
	l.pad = 1;
	l.in = (struct tensor_slice){ 0, 0, 4 };
	l.out = (struct tensor_slice){ 1, 0, 4 };
	model_desc_add_layer(&d, &l, &err);
	CHECK(model_desc_finish(&d, &err) == -1);
	CHECK_CONTAINS(err.msg, "bad.conv");
	model_desc_free(&d);
	CHECK(model_by_name(&d, "vgg16", 224, 14, &err) == -1);
	CHECK_CONTAINS(err.msg, "vgg16");
}

static const struct densenet_config small_config = {
	.growth = 4, .blocks = { 2, 2, 2, 2 }, .init_features = 8, .bn_size = 2,
};

struct small_net {
	struct model m;
	struct backend *b;
	float x[2 * 3 * 64 * 64];
	float r[2 * 3];
};

static int small_setup(struct small_net *s, uint64_t seed)
{
	struct model_desc d;
	struct trainer_error err = { "" };
	struct backend_options opt = { .max_batch = 2, .precision = PRECISION_FP32 };
	struct rng r;

	if (model_densenet(&d, &small_config, 64, 3, &err) || model_create(&s->m, &d, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s", err.msg);
		return -1;
	}
	model_init_params(&s->m, seed);
	s->b = backend_ref_ops.create(&s->m, &opt, &err);
	rng_seed(&r, seed + 1);
	for (size_t i = 0; i < sizeof(s->x) / sizeof(float); i++)
		s->x[i] = (float)rng_normal(&r);
	for (int i = 0; i < 6; i++)
		s->r[i] = (float)(rng_uniform(&r) * 2 - 1);
	return s->b ? 0 : -1;
}

static double small_objective(struct small_net *s)
{
	struct backend_input in = { .x = s->x, .count = 2 };
	struct trainer_error err;
	float y[6];
	double sum = 0.0;

	backend_ref_ops.forward(s->b, &in, 1, y, &err);
	for (int i = 0; i < 6; i++)
		sum += (double)y[i] * s->r[i];
	return sum;
}

/* The whole-network glue (slices, accumulate flags, transitions) on ref:
 * sampled parameter gradients against finite differences. ReLU kinks may
 * spoil a few samples; at least 90% must agree. */
static void test_small_densenet_gradients_fd(void)
{
	struct small_net *s = calloc(1, sizeof(*s));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = s->x, .count = 2 };
	float y[6];
	int good = 0, total = 0;

	if (small_setup(s, 5) == 0) {
		backend_ref_ops.forward(s->b, &in, 1, y, &err);
		CHECK(backend_ref_ops.backward(s->b, s->r, NULL, NULL, NULL, &err) == 0);
		float *g = malloc(s->m.desc.param_count * sizeof(float));
		memcpy(g, s->m.grads, s->m.desc.param_count * sizeof(float));
		for (size_t k = 0; k < 80; k++) {
			size_t i = k * 7727 % s->m.desc.param_count;
			float keep = s->m.params[i];
			s->m.params[i] = keep + 1e-3f;
			double lp = small_objective(s);
			s->m.params[i] = keep - 1e-3f;
			double lm = small_objective(s);
			s->m.params[i] = keep;
			double num = (lp - lm) / 2e-3;
			total++;
			if (test_near(g[i], num, 2e-3, 6e-2))
				good++;
			else
				printf("  param %zu (layer %s): %.6g vs numeric %.6g\n", i,
				       s->m.desc.layers[model_layer_of_param(&s->m.desc, i)].name, g[i], num);
		}
		CHECK_MSG(good * 10 >= total * 9, "%d of %d gradients agree", good, total);
		free(g);
	}
	if (s->b)
		backend_ref_ops.destroy(s->b);
	model_destroy(&s->m);
	free(s);
}

struct ready_log {
	size_t next_end;  /* backward order: ranges come from the end down */
	int calls, ordered;
};

static void on_ready(size_t offset, size_t count, void *user)
{
	struct ready_log *log = user;

	if (offset + count != log->next_end)
		log->ordered = 0;
	log->next_end = offset;
	log->calls++;
}

static void test_grad_ready_covers_all_in_backward_order(void)
{
	struct small_net *s = calloc(1, sizeof(*s));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = s->x, .count = 2 };
	float y[6];

	if (small_setup(s, 9) == 0) {
		struct ready_log log = { s->m.desc.param_count, 0, 1 };
		backend_ref_ops.forward(s->b, &in, 1, y, &err);
		CHECK(backend_ref_ops.backward(s->b, s->r, NULL, on_ready, &log, &err) == 0);
		CHECK(log.ordered);
		CHECK_INT(log.next_end, 0);
		int layers_with_params = 0;
		for (int i = 0; i < s->m.desc.layer_count; i++)
			layers_with_params += s->m.desc.layers[i].weight_count > 0;
		CHECK_INT(log.calls, layers_with_params);
	}
	if (s->b)
		backend_ref_ops.destroy(s->b);
	model_destroy(&s->m);
	free(s);
}

static void test_bn_running_stats_update(void)
{
	struct small_net *s = calloc(1, sizeof(*s));
	struct trainer_error err = { "" };
	struct backend_input in = { .x = s->x, .count = 2 };
	float y[6], y_eval[6];

	if (small_setup(s, 11) == 0) {
		/* norm0 is the first BN: running_var starts at 1 and moves 10% */
		const struct state_entry *e = model_find_entry(&s->m.desc, "features.norm0.running_mean");
		CHECK(e != NULL);
		backend_ref_ops.forward(s->b, &in, 1, y, &err);
		double moved = 0;
		for (size_t c = 0; e && c < e->count; c++)
			moved += fabs(s->m.state[e->offset + c]);
		CHECK(moved > 0);
		/* eval twice gives the same logits and leaves the state alone */
		float before = e ? s->m.state[e->offset] : 0;
		backend_ref_ops.forward(s->b, &in, 0, y, &err);
		backend_ref_ops.forward(s->b, &in, 0, y_eval, &err);
		CHECK(memcmp(y, y_eval, sizeof(y)) == 0);
		CHECK(e && s->m.state[e->offset] == before);
		CHECK(backend_ref_ops.backward(s->b, s->r, NULL, NULL, NULL, &err) == -1);
	}
	if (s->b)
		backend_ref_ops.destroy(s->b);
	model_destroy(&s->m);
	free(s);
}

const struct test_case model_tests[] = {
	{ "densenet121_parameter_count", test_densenet121_parameter_count },
	{ "resnet50_parameter_count", test_resnet50_parameter_count },
	{ "densenet121_keys_match_torchvision", test_densenet121_keys_match_torchvision },
	{ "dense_block_is_one_buffer", test_dense_block_is_one_buffer },
	{ "builder_rejects_bad_shapes", test_builder_rejects_bad_shapes },
	{ "small_densenet_gradients_fd", test_small_densenet_gradients_fd },
	{ "grad_ready_covers_all_in_backward_order", test_grad_ready_covers_all_in_backward_order },
	{ "bn_running_stats_update", test_bn_running_stats_update },
	{ 0 }
};
