/* ckpt_compare.c - compare the learnable parameters (or the BN running
 * statistics) of two chexnet
 * checkpoints written by a test (tmpdir/DIR/last/model.safetensors): the
 * end-to-end and multi-node equivalence tests share it. What it does not
 * do: run anything.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_compare.h"
#include "runner.h"
#include "train/safetensors.h"

/* The learnable parameters (every F32 tensor but BN running statistics),
 * or with `running` those statistics, of tmpdir/DIR/last/model.safetensors,
 * in file order. */
static float *tensors(const char *dir, int running, size_t *count)
{
	char path[1024];
	struct st_file f;
	struct trainer_error err = { "" };
	snprintf(path, sizeof(path), "%s/%s/last/model.safetensors", test_tmpdir(), dir);
	if (st_read(path, &f, &err)) {
		test_fail_at(__FILE__, __LINE__, "%s", err.msg);
		return NULL;
	}
	size_t n = 0;
	for (int i = 0; i < f.count; i++)
		if (!strcmp(f.tensors[i].dtype, "F32") && !strstr(f.tensors[i].name, "running_") == !running)
			n += f.tensors[i].bytes / sizeof(float);
	float *all = malloc(n * sizeof(float) + 1);
	*count = 0;
	for (int i = 0; all && i < f.count; i++)
		if (!strcmp(f.tensors[i].dtype, "F32") && !strstr(f.tensors[i].name, "running_") == !running) {
			memcpy(all + *count, f.tensors[i].data, f.tensors[i].bytes);
			*count += f.tensors[i].bytes / sizeof(float);
		}
	st_free(&f);
	return all;
}

static double max_rel_diff(const char *a_dir, const char *b_dir, int running, size_t least)
{
	size_t na = 0, nb = 0;
	float *a = tensors(a_dir, running, &na), *b = tensors(b_dir, running, &nb);
	double worst = -1;
	if (a && b && na == nb && na > least) {
		worst = 0;
		for (size_t i = 0; i < na; i++) {
			double scale = fabsf(b[i]) > 1 ? fabsf(b[i]) : 1;
			double d = fabsf(a[i] - b[i]) / scale;
			worst = d > worst ? d : worst;
		}
	}
	CHECK_MSG(na == nb && na > least, "%s counts %zu vs %zu", running ? "BN statistic" : "parameter",
		  na, nb);
	free(a);
	free(b);
	return worst;
}

double ckpt_max_rel_diff(const char *a_dir, const char *b_dir)
{
	return max_rel_diff(a_dir, b_dir, 0, 6000000);
}

double ckpt_max_rel_diff_bn(const char *a_dir, const char *b_dir)
{
	return max_rel_diff(a_dir, b_dir, 1, 1000);
}

