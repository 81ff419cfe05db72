/* test_gpu_audit.c - issue 9's code read as a test that runs on every
 * build, CPU only (group gpu-audit): the real sources of trainer/backend/gpu
 * (*.c, *.cu, *.h, *.cuh) and runtime/transport/comm_nccl.c are scanned
 * (tests/gpu_audit.c) and must keep three rules:
 *   1. every CUDA runtime, cuDNN, cuBLAS, NCCL call and every gpu_k_*
 *      kernel wrapper is checked: the direct argument of the library's
 *      macro (GPU_CUDA, GPU_CUDNN, GPU_CUBLAS: file:line and the library's
 *      error string), or, in comm_nccl.c (no macros), its status used;
 *      every kernel launch is followed by a returned or checked
 *      cudaGetLastError in its wrapper;
 *   2. allocation and release only in create/open/destroy/close and
 *      grow-on-first-use functions (no per-step allocation, M2);
 *   3. no synchronous copy or set, and no host wait, except in the
 *      functions listed with the reason they may wait;
 *   4. the math types that permit TF32 are named in gpu_backend.c only
 *      (precision_math: what --precision means there).
 * The exceptions are tables (gpu_audit_policy.c), each entry with its
 * reason; an entry nothing needs any more fails. Synthetic snippets show
 * each rule failing. What this does not do: prove the code right on a GPU, or
 * follow calls across functions (a wait in a helper is the helper's).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_audit.h"
#include "runner.h"

/* --- reading the tree --- */

struct tree {
	char *files[128];
	int count;
	struct audit_sites sites;
};

static int audited_name(const char *name)
{
	static const char *const ext[] = { ".c", ".cu", ".h", ".cuh", NULL };
	size_t n = strlen(name);

	for (int i = 0; ext[i]; i++) {
		size_t k = strlen(ext[i]);
		if (n > k && strcmp(name + n - k, ext[i]) == 0)
			return 1;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_file(struct tree *t, const char *rel)
{
	char *path = test_path(test_src_dir(), rel);
	char *text = path ? test_read_file(path, NULL) : NULL;
	int rc = -1;

	CHECK_MSG(text, "cannot read %s", rel);
	if (text && t->count < 128 && (t->files[t->count] = strdup(rel))) {
		rc = audit_scan(t->files[t->count], text, &t->sites);
		t->count++;
	}
	free(text);
	free(path);
	return rc;
}

/* Every audited file of trainer/backend/gpu and runtime/transport/comm_nccl.c, scanned. */
static int tree_scan(struct tree *t)
{
	char *dir = test_path(test_src_dir(), "trainer/backend/gpu");
	DIR *d = dir ? opendir(dir) : NULL;
	char *names[128];
	int count = 0, rc = 0;

	memset(t, 0, sizeof(*t));
	CHECK_MSG(d, "cannot open %s", dir ? dir : "trainer/backend/gpu");
	for (struct dirent *e; d && (e = readdir(d)) && count < 128;)
		if (audited_name(e->d_name) && (names[count] = malloc(strlen(e->d_name) + sizeof("trainer/backend/gpu/"))))
			sprintf(names[count++], "trainer/backend/gpu/%s", e->d_name);
	if (d)
		closedir(d);
	free(dir);
	qsort(names, (size_t)count, sizeof(names[0]), by_name);
	for (int i = 0; i < count; i++) {
		rc |= add_file(t, names[i]);
		free(names[i]);
	}
	rc |= add_file(t, "runtime/transport/comm_nccl.c");
	CHECK_INT(rc, 0);
	return rc || !d ? -1 : 0;
}

static void tree_free(struct tree *t)
{
	for (int i = 0; i < t->count; i++)
		free(t->files[i]);
	audit_sites_free(&t->sites);
}

/* --- synthetic snippets: each rule can fail --- */

static const struct audit_allow test_unchecked[] = {
	{ "trainer/backend/gpu/fake.c", "fake_destroy", "cudaFree", 0, "test" },
	{ 0 }
};
static const struct audit_place test_allocating[] = {
	{ "trainer/backend/gpu/fake.c", "fake_create", "test" },
	{ "trainer/backend/gpu/fake.c", "fake_destroy", "test" },
	{ 0 }
};
static const struct audit_allow test_waiting[] = {
	{ "trainer/backend/gpu/fake.c", "fake_store", "cudaStreamSynchronize", 0, "test" },
	{ 0 }
};
static const char *const test_hand_checked[] = { "runtime/fake_nccl.c", NULL };
static const char *const test_status_text[] = { "cudaGetErrorString", NULL };
static const struct audit_policy test_policy = {
	test_status_text, test_hand_checked, test_unchecked, test_allocating, test_waiting,
};

/* Scans src as `file`; the rule-1..3 violations of test_policy in r. */
static int snippet(const char *file, const char *src, struct audit_sites *s,
		   struct audit_report *r)
{
	memset(s, 0, sizeof(*s));
	memset(r, 0, sizeof(*r));
	CHECK_INT(audit_scan(file, src, s), 0);
	audit_rule_checked(s, &test_policy, NULL, r);
	audit_rule_launches(s, r);
	audit_rule_alloc(s, &test_policy, NULL, r);
	audit_rule_sync(s, &test_policy, NULL, r);
	return r->violations;
}

static void test_strip_keeps_lines_drops_comments_and_literals(void)
{
	const char *src = "a /* cudaMalloc(&p, 1)\n */ b(\"cudaFree(p)\\\"\", 'x', '\\'');"
			  " // cudaMemcpy(\nc;";
	char *out = audit_strip(src);

	CHECK(out && strlen(out) == strlen(src));
	CHECK(out && !strstr(out, "cuda"));
	CHECK(out && strchr(out, '\n') - out == strchr(src, '\n') - src);
	CHECK(out && strstr(out, "b(") && strstr(out, "c;"));
	free(out);
}

/* What the scanner cannot follow is an error, never a silent pass. */
static void test_unbalanced_text_is_refused(void)
{
	struct audit_sites s = { 0 };
	const char *src =
		"#ifdef HAVE_X\n"
		"int fake_step(void) {\n"
		"#else\n"
		"int fake_step(int x) {\n"
		"#endif\n"
		"\tcudaMemcpy(a, b, 4, k);\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(audit_scan("trainer/backend/gpu/fake.c", src, &s), -1);
	CHECK_INT(audit_scan("trainer/backend/gpu/fake.c", "int f(void) { g(); )\n", &s), -1);
	CHECK_INT(audit_scan("trainer/backend/gpu/fake.c", "#define BEGIN {\nint f(void) { }\n", &s), 0);
	audit_sites_free(&s);
}

static void test_comment_or_string_mentioning_cudaMalloc_is_ignored(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"int fake_step(void)\n"
		"{\n"
		"\t/* cudaMalloc(&p, 64); cudaMemcpy(a, b, 4, k); */\n"
		"\tputs(\"cudaMalloc(&p, 64); cudaDeviceSynchronize();\");  // cudaFree(p);\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 0);
	CHECK_INT(s.count, 0);
	audit_sites_free(&s);
}

static void test_unchecked_call_found_with_file_line(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int fake_step(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_CUDA(cudaEventRecord(b->e, b->stream));\n"
		"\tcudaStreamWaitEvent(b->copy,\n"
		"\t\t\t    b->e, 0);\n"
		"\tif (b->x)\n"
		"\t\tgpu_k_relu_fwd(b->stream, b->dt, x, y);\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 2);
	CHECK_CONTAINS(r.text, "trainer/backend/gpu/fake.c:4: cudaStreamWaitEvent in fake_step: rule 1 "
		       "(checked): not the direct argument of GPU_CUDA (status discarded)");
	CHECK_CONTAINS(r.text, "trainer/backend/gpu/fake.c:7: gpu_k_relu_fwd in fake_step: rule 1");
	audit_sites_free(&s);
}

static void test_checked_multi_line_call_passes(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int fake_step(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_COPY(\n"
		"\t\tcudaMemcpyAsync(b->dst, b->src,\n"
		"\t\t\t\tb->bytes, cudaMemcpyHostToDevice,\n"
		"\t\t\t\tb->stream));\n"
		"\tGPU_CUDNN(cudnnSetStream(b->cudnn, b->stream));\n"
		"\tGPU_CUBLAS(cublasSetStream(b->cublas, b->stream));\n"
		"\tGPU_CUDA(gpu_k_relu_fwd(b->stream, b->dt, x, y));\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 0);
	CHECK_INT(s.count, 4);
	CHECK(s.count == 4 && s.v[0].line == 4 && strcmp(s.v[0].wrapper, "GPU_COPY") == 0);
	CHECK(s.count == 4 && strcmp(s.v[0].func, "fake_step") == 0);
	if (r.violations)
		printf("%s", r.text);
	audit_sites_free(&s);
}

static void test_wrong_macro_or_hand_check_fails_in_trainer(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int fake_create(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_CUDNN(cudaMalloc(&b->pool, 64));\n"
		"\tif (cudaMalloc(&b->other, 64) != cudaSuccess)\n"
		"\t\treturn -1;\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 2);
	CHECK_CONTAINS(r.text, "fake.c:3: cudaMalloc in fake_create: rule 1 (checked): wrapped "
		       "in GPU_CUDNN, not GPU_CUDA");
	CHECK_CONTAINS(r.text, "fake.c:4: cudaMalloc in fake_create: rule 1 (checked): not the "
		       "direct argument of GPU_CUDA\n");
	audit_sites_free(&s);
}

static void test_hand_checked_file_needs_a_used_status(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int nccl_thing(struct ctx *c, char *err, size_t n)\n"
		"{\n"
		"\tcudaError_t ce = cudaSetDevice(c->device);\n"
		"\tif (ce == cudaSuccess)\n"
		"\t\tce = wait ? cudaEventSynchronize(c->e) : cudaEventQuery(c->e);\n"
		"\tif (ncclGroupEnd() != ncclSuccess)\n"
		"\t\treturn -1;\n"
		"\tswitch (ce) {\n"
		"\tcase cudaSuccess: ncclGroupStart(); break;\n"
		"\tdefault: (void)cudaGetLastError();\n"
		"\t}\n"
		"\treturn nccl_issued(c, ncclAllReduce(a, a, 1, t, o, c->comm, c->s), w);\n"
		"}\n";

	snippet("runtime/fake_nccl.c", src, &s, &r);
	memset(&r, 0, sizeof(r));
	CHECK_INT(audit_rule_checked(&s, &test_policy, NULL, &r), 2);
	CHECK_CONTAINS(r.text, "fake_nccl.c:9: ncclGroupStart in nccl_thing: rule 1 (checked): "
		       "status discarded");
	CHECK_CONTAINS(r.text, "fake_nccl.c:10: cudaGetLastError in nccl_thing: rule 1 (checked): "
		       "status discarded");
	audit_sites_free(&s);
}

static void test_allocation_in_step_function_fails(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int fake_create(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_CUDA(cudaMalloc((void **)&b->pool, b->bytes));\n"
		"\treturn (b->t = calloc(1, 8)) ? 0 : -1;\n"
		"}\n"
		"\n"
		"static const struct ops fake_ops = { .step = fake_step, .name = \"x\" };\n"
		"static int fake_step(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_CUDA(cudaMallocAsync(&b->tmp, 64, b->stream));\n"
		"\tGPU_CUDA(cudaEventCreateWithFlags(&b->e, cudaEventDisableTiming));\n"
		"\tfloat *scratch = malloc(64);\n"
		"\tfree(scratch);\n"
		"\treturn 0;\n"
		"}\n"
		"\n"
		"static void fake_destroy(struct backend *b)\n"
		"{\n"
		"\tcudaFree(b->pool);\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 4);
	CHECK_CONTAINS(r.text, "fake.c:10: cudaMallocAsync in fake_step: rule 2 (no per-step "
		       "allocation)");
	CHECK_CONTAINS(r.text, "fake.c:11: cudaEventCreateWithFlags in fake_step: rule 2");
	CHECK_CONTAINS(r.text, "fake.c:12: malloc in fake_step: rule 2");
	CHECK_CONTAINS(r.text, "fake.c:13: free in fake_step: rule 2");
	CHECK(!strstr(r.text, "fake_create") && !strstr(r.text, "fake_destroy"));
	audit_sites_free(&s);
}

/* A call that puts work on the device but is checked by the plain macro
 * is not counted (chexnet bench's launches per step would miss it): rule 1
 * names the counting macro it needs. */
static void test_an_uncounted_launch_fails(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int fake_step(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_CUDA(cudaMemsetAsync(b->d, 0, 4, b->stream));\n"
		"\tGPU_CUDNN(cudnnConvolutionForward(b->cudnn, &one, x, b->x, w, b->w, c, a, ws, n,\n"
		"\t\t&zero, y, b->y));\n"
		"\tGPU_CUBLAS(cublasGemmEx(b->cublas, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, 1, &one, b->w, t,\n"
		"\t\t1, b->x, t, 1, &zero, b->y, t, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));\n"
		"\tGPU_CUDNN_RUN(cudnnConvolutionBackwardData(b->cudnn, &one, w, b->w, y, b->dy, c, a,\n"
		"\t\tws, n, &zero, x, b->dx));\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 3);
	CHECK_CONTAINS(r.text, "fake.c:3: cudaMemsetAsync in fake_step: rule 1 (checked): wrapped in "
		       "GPU_CUDA, not GPU_COPY");
	CHECK_CONTAINS(r.text, "fake.c:4: cudnnConvolutionForward in fake_step: rule 1 (checked): wrapped "
		       "in GPU_CUDNN, not GPU_CUDNN_RUN");
	CHECK_CONTAINS(r.text, "fake.c:6: cublasGemmEx in fake_step: rule 1 (checked): wrapped in "
		       "GPU_CUBLAS, not GPU_CUBLAS_RUN");
	audit_sites_free(&s);
}

static void test_synchronous_copy_in_step_function_fails(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static int fake_step(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_COPY(cudaMemcpyAsync(b->h, b->d, 4, cudaMemcpyDeviceToHost, b->stream));\n"
		"\tGPU_CUDA(cudaMemcpy(b->h, b->d, 4, cudaMemcpyDeviceToHost));\n"
		"\tGPU_CUDA(cudaMemset(b->d, 0, 4));\n"
		"\tGPU_CUDA(cudaMemcpyToSymbol(k, b->h, 4));\n"
		"\tGPU_CUDA(cudaStreamSynchronize(b->stream));\n"
		"\tGPU_CUDA(cudaDeviceSynchronize());\n"
		"\treturn 0;\n"
		"}\n"
		"static int fake_store(struct backend *b, struct trainer_error *err)\n"
		"{\n"
		"\tGPU_CUDA(cudaStreamSynchronize(b->stream));\n"
		"\tGPU_CUDA(cudaDeviceSynchronize());\n"
		"\treturn 0;\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 6);
	CHECK_CONTAINS(r.text, "fake.c:4: cudaMemcpy in fake_step: rule 3 (no synchronous copy "
		       "on the step path): synchronous copy/set");
	CHECK_CONTAINS(r.text, "fake.c:5: cudaMemset in fake_step: rule 3");
	CHECK_CONTAINS(r.text, "fake.c:6: cudaMemcpyToSymbol in fake_step: rule 3");
	CHECK_CONTAINS(r.text, "fake.c:7: cudaStreamSynchronize in fake_step: rule 3 (no "
		       "synchronous copy on the step path): host wait");
	CHECK_CONTAINS(r.text, "fake.c:8: cudaDeviceSynchronize in fake_step: rule 3");
	CHECK_CONTAINS(r.text, "fake.c:14: cudaDeviceSynchronize in fake_store: rule 3");
	CHECK(!strstr(r.text, ":3: ") && !strstr(r.text, ":13: "));
	audit_sites_free(&s);
}

static void test_kernel_launch_needs_checked_last_error(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"template <typename T>\n"
		"__global__ void k(float *x) { x[threadIdx.x] = 0; }\n"
		"extern \"C\" cudaError_t gpu_k_good(cudaStream_t s, float *x)\n"
		"{\n"
		"\tGPU_K_DISPATCH(dt, (k<T><<<1, 32, 0, s>>>(x)));\n"
		"\treturn cudaGetLastError();\n"
		"}\n"
		"extern \"C\" cudaError_t gpu_k_silent(cudaStream_t s, float *x)\n"
		"{\n"
		"\tk<float><<<1, 32, 0, s>>>(x);\n"
		"\treturn cudaSuccess;\n"
		"}\n"
		"extern \"C\" cudaError_t gpu_k_cleared(cudaStream_t s, float *x)\n"
		"{\n"
		"\tk<float><<<1, 32, 0, s>>>(x);\n"
		"\tcudaGetLastError();\n"
		"\treturn cudaSuccess;\n"
		"}\n"
		"extern \"C\" cudaError_t gpu_k_early(cudaStream_t s, float *x)\n"
		"{\n"
		"\tk<float><<<1, 32, 0, s>>>(x);\n"
		"\tif (x)\n"
		"\t\treturn cudaSuccess;\n"
		"\treturn cudaGetLastError();\n"
		"}\n";

	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	CHECK_INT(audit_scan("trainer/backend/gpu/fake.cu", src, &s), 0);
	CHECK_INT(audit_rule_launches(&s, &r), 3);
	CHECK_CONTAINS(r.text, "fake.cu:10: k<<< in gpu_k_silent: rule 1 (checked): kernel launch");
	CHECK_CONTAINS(r.text, "fake.cu:15: k<<< in gpu_k_cleared: rule 1");
	CHECK_CONTAINS(r.text, "fake.cu:21: k<<< in gpu_k_early: rule 1");
	memset(&r, 0, sizeof(r));
	CHECK_INT(audit_rule_checked(&s, &gpu_audit_policy, NULL, &r), 1);  /* the real *.cu entry */
	CHECK_CONTAINS(r.text, "fake.cu:16: cudaGetLastError in gpu_k_cleared: rule 1");
	audit_sites_free(&s);
}

static void test_call_hidden_in_a_macro_is_reported(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"#define WAIT(s) \\\n"
		"\tcudaStreamSynchronize(s)\n"
		"static int fake_step(struct backend *b)\n"
		"{\n"
		"\treturn WAIT(b->stream);\n"
		"}\n";

	CHECK_INT(snippet("trainer/backend/gpu/fake.c", src, &s, &r), 2);
	CHECK_CONTAINS(r.text, "fake.c:2: cudaStreamSynchronize in #define WAIT: rule 1 "
		       "(checked): inside a macro body");
	CHECK_CONTAINS(r.text, "fake.c:2: cudaStreamSynchronize in #define WAIT: rule 3");
	audit_sites_free(&s);
}

static void test_allow_entry_excuses_only_its_function(void)
{
	struct audit_sites s;
	struct audit_report r;
	const char *src =
		"static void fake_destroy(struct backend *b)\n"
		"{\n"
		"\tcudaFree(b->pool);\n"
		"}\n"
		"static void fake_reset(struct backend *b)\n"
		"{\n"
		"\tcudaFree(b->pool);\n"
		"}\n";
	int used[2] = { 0, 0 };

	snippet("trainer/backend/gpu/fake.c", src, &s, &r);
	memset(&r, 0, sizeof(r));
	CHECK_INT(audit_rule_checked(&s, &test_policy, used, &r), 1);
	CHECK_INT(used[0], 1);
	CHECK_CONTAINS(r.text, "fake.c:7: cudaFree in fake_reset: rule 1");
	audit_sites_free(&s);
}

/* --- the real sources --- */

static void test_tree_scan_sees_the_gpu_code(void)
{
	struct tree t;
	int wrapped[3] = { 0, 0, 0 }, launches = 0, nccl = 0, files_with_sites = 0;
	const char *macros[3] = { "GPU_CUDA", "GPU_CUDNN", "GPU_CUBLAS" };

	if (tree_scan(&t)) {
		tree_free(&t);
		return;
	}
	for (size_t i = 0; i < t.sites.count; i++) {
		const struct audit_site *site = &t.sites.v[i];
		for (int k = 0; k < 3; k++)
			wrapped[k] += strcmp(site->wrapper, macros[k]) == 0;
		launches += site->kind == AUDIT_LAUNCH;
		nccl += strncmp(site->call, "nccl", 4) == 0;
	}
	for (int f = 0; f < t.count; f++)
		for (size_t i = 0; i < t.sites.count; i++)
			if (t.sites.v[i].file == t.files[f]) {
				files_with_sites++;
				break;
			}
	printf("gpu-audit: %d files (%d with sites), %zu sites: %d GPU_CUDA, %d GPU_CUDNN, "
	       "%d GPU_CUBLAS, %d launches, %d NCCL calls\n", t.count, files_with_sites,
	       t.sites.count, wrapped[0], wrapped[1], wrapped[2], launches, nccl);
	/* A reader that found nothing would pass every rule: it must not. */
	CHECK(t.count >= 20);
	CHECK(files_with_sites >= 10);
	CHECK(wrapped[0] >= 50 && wrapped[1] >= 10 && wrapped[2] >= 3);
	CHECK(launches >= 20);
	CHECK(nccl >= 8);
	tree_free(&t);
}

/* Runs one rule over the tree; counts uses of the policy's entries. */
static void tree_rule(int rule, int *used)
{
	struct tree t;
	struct audit_report *r = calloc(1, sizeof(*r));

	if (!r || tree_scan(&t)) {
		if (r)
			tree_free(&t);
		free(r);
		CHECK(r);
		return;
	}
	if (rule == 1)
		audit_rule_checked(&t.sites, &gpu_audit_policy, used, r);
	else if (rule == 4)
		audit_rule_launches(&t.sites, r);
	else if (rule == 2)
		audit_rule_alloc(&t.sites, &gpu_audit_policy, used, r);
	else
		audit_rule_sync(&t.sites, &gpu_audit_policy, used, r);
	CHECK_MSG(r->violations == 0, "%d violation(s):\n%s", r->violations, r->text);
	tree_free(&t);
	free(r);
}

/* Lines of text (stripped) naming word as a whole identifier: the first
 * in *first, how many in all. */
static int word_lines(const char *text, const char *word, int *first)
{
	size_t n = strlen(word);
	int count = 0;
	for (const char *s = strstr(text, word); s; s = strstr(s + n, word)) {
		char before = s == text ? ' ' : s[-1], after = s[n];
		if (isalnum((unsigned char)before) || before == '_' || isalnum((unsigned char)after) ||
		    after == '_')
			continue;
		if (count++ == 0) {
			*first = 1;
			for (const char *c = text; c < s; c++)
				*first += *c == '\n';
		}
	}
	return count;
}

/* The math types that let fp32 work run on TF32 (or fp16) tensor cores
 * are named in one place, gpu_backend.c's precision_math, which reads the
 * precision's meaning (precision.c): no other file can ask for TF32. What
 * each run asks at run time: gpu-layers on the emulated device. */
static void test_tree_tf32_math_named_in_one_place(void)
{
	static const char *const tf32[] = {
		"CUDNN_TENSOR_OP_MATH", "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION",
		"CUBLAS_COMPUTE_32F_FAST_TF32", "CUBLAS_TF32_TENSOR_OP_MATH", "CUBLAS_TENSOR_OP_MATH",
		"CUBLAS_COMPUTE_32F_FAST_16F", "CUBLAS_COMPUTE_32F_FAST_16BF", NULL,
	};
	static const char *const place = "trainer/backend/gpu/gpu_backend.c";
	struct tree t;
	int in_place = 0;
	if (tree_scan(&t))
		return;
	for (int i = 0; i < t.count; i++) {
		char *path = test_path(test_src_dir(), t.files[i]);
		char *text = path ? test_read_file(path, NULL) : NULL;
		char *bare = text ? audit_strip(text) : NULL;
		for (int k = 0; bare && tf32[k]; k++) {
			int line = 0, n = word_lines(bare, tf32[k], &line);
			if (!strcmp(t.files[i], place))
				in_place += n;
			else
				CHECK_MSG(n == 0, "%s:%d: %s outside %s", t.files[i], line, tf32[k], place);
		}
		free(bare);
		free(text);
		free(path);
	}
	CHECK_MSG(in_place >= 2, "%s names %d TF32 math types: the tf32 precision asks for none",
		  place, in_place);
	tree_free(&t);
}

static void test_tree_every_call_checked(void) { tree_rule(1, NULL); }
static void test_tree_every_kernel_launch_checked(void) { tree_rule(4, NULL); }
static void test_tree_allocation_only_at_setup(void) { tree_rule(2, NULL); }
static void test_tree_no_synchronous_copy_on_step_path(void) { tree_rule(3, NULL); }

static int table_len_allow(const struct audit_allow *a)
{
	int n = 0;
	while (a[n].file)
		n++;
	return n;
}

/* Every exception is still needed and says why; waits are per stream or
 * event only. */
static void test_tree_allow_lists_current_with_reasons(void)
{
	const struct audit_allow *unchecked = gpu_audit_policy.unchecked;
	const struct audit_allow *waiting = gpu_audit_policy.waiting;
	const struct audit_place *allocating = gpu_audit_policy.allocating;
	int n1 = table_len_allow(unchecked), n3 = table_len_allow(waiting), n2 = 0;
	while (allocating[n2].file)
		n2++;
	int *u1 = calloc((size_t)n1, sizeof(int)), *u2 = calloc((size_t)n2, sizeof(int));
	int *u3 = calloc((size_t)n3, sizeof(int));
	struct tree t;
	struct audit_report *r = calloc(1, sizeof(*r));

	if (!u1 || !u2 || !u3 || !r)
		goto out;
	if (tree_scan(&t)) {
		tree_free(&t);
		goto out;
	}
	audit_rule_checked(&t.sites, &gpu_audit_policy, u1, r);
	audit_rule_alloc(&t.sites, &gpu_audit_policy, u2, r);
	audit_rule_sync(&t.sites, &gpu_audit_policy, u3, r);
	for (int i = 0; i < n1; i++) {
		CHECK_MSG(u1[i], "rule 1 entry no longer needed: %s %s %s (remove it)",
			  unchecked[i].file, unchecked[i].func, unchecked[i].call);
		CHECK(strlen(unchecked[i].reason) > 20);
	}
	for (int i = 0; i < n2; i++) {
		CHECK_MSG(u2[i], "rule 2 entry no longer needed: %s %s (remove it)",
			  allocating[i].file, allocating[i].func);
		CHECK(strlen(allocating[i].reason) >= 5);
	}
	for (int i = 0; i < n3; i++) {
		CHECK_MSG(u3[i], "rule 3 entry no longer needed: %s %s %s (remove it)",
			  waiting[i].file, waiting[i].func, waiting[i].call);
		CHECK(strlen(waiting[i].reason) > 20);
		/* README: no synchronous cudaMemcpy/cudaMemset, no device-wide sync, anywhere */
		CHECK_MSG(strcmp(waiting[i].call, "cudaStreamSynchronize") == 0 ||
			  strcmp(waiting[i].call, "cudaEventSynchronize") == 0,
			  "rule 3 entry %s %s: %s is never allowed", waiting[i].file,
			  waiting[i].func, waiting[i].call);
	}
	tree_free(&t);
out:
	CHECK(u1 && u2 && u3 && r);
	free(u1);
	free(u2);
	free(u3);
	free(r);
}

const struct test_case gpu_audit_tests[] = {
	{ "strip_keeps_lines_drops_comments_and_literals",
	  test_strip_keeps_lines_drops_comments_and_literals },
	{ "unbalanced_text_is_refused", test_unbalanced_text_is_refused },
	{ "comment_or_string_mentioning_cudaMalloc_is_ignored",
	  test_comment_or_string_mentioning_cudaMalloc_is_ignored },
	{ "unchecked_call_found_with_file_line", test_unchecked_call_found_with_file_line },
	{ "checked_multi_line_call_passes", test_checked_multi_line_call_passes },
	{ "wrong_macro_or_hand_check_fails_in_trainer",
	  test_wrong_macro_or_hand_check_fails_in_trainer },
	{ "hand_checked_file_needs_a_used_status", test_hand_checked_file_needs_a_used_status },
	{ "allocation_in_step_function_fails", test_allocation_in_step_function_fails },
	{ "an_uncounted_launch_fails", test_an_uncounted_launch_fails },
	{ "synchronous_copy_in_step_function_fails",
	  test_synchronous_copy_in_step_function_fails },
	{ "kernel_launch_needs_checked_last_error", test_kernel_launch_needs_checked_last_error },
	{ "call_hidden_in_a_macro_is_reported", test_call_hidden_in_a_macro_is_reported },
	{ "allow_entry_excuses_only_its_function", test_allow_entry_excuses_only_its_function },
	{ "tree_scan_sees_the_gpu_code", test_tree_scan_sees_the_gpu_code },
	{ "tree_every_call_checked", test_tree_every_call_checked },
	{ "tree_every_kernel_launch_checked", test_tree_every_kernel_launch_checked },
	{ "tree_allocation_only_at_setup", test_tree_allocation_only_at_setup },
	{ "tree_no_synchronous_copy_on_step_path", test_tree_no_synchronous_copy_on_step_path },
	{ "tree_allow_lists_current_with_reasons", test_tree_allow_lists_current_with_reasons },
	{ "tree_tf32_math_named_in_one_place", test_tree_tf32_math_named_in_one_place },
	{ 0 }
};
