/* gpu_audit.c - the GPU source audit's scanner and rules (gpu_audit.h):
 * strip comments and literals, cut the text into tokens, match brackets,
 * find each function definition's body, and record every call and kernel
 * launch of interest with its line, enclosing function, the call it is the
 * direct argument of, and whether its value is thrown away. The rules are
 * table lookups over those sites. What it does not do: read files or
 * decide policy (tests/test_gpu_audit.c holds the tables and reasons).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_audit.h"

/* --- text --- */

char *audit_strip(const char *src)
{
	size_t n = strlen(src);
	char *out = malloc(n + 1);
	enum { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHAR } st = CODE;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = src[i], next = src[i + 1];
		out[i] = c == '\n' ? '\n' : ' ';
		switch (st) {
		case CODE:
			if (c == '/' && next == '/')
				st = LINE_COMMENT;
			else if (c == '/' && next == '*')
				st = BLOCK_COMMENT, out[++i] = ' ';
			else if (c == '"')
				st = STRING;
			else if (c == '\'')
				st = CHAR;
			else
				out[i] = c;
			break;
		case LINE_COMMENT:
			if (c == '\n')
				st = CODE;
			break;
		case BLOCK_COMMENT:
			if (c == '*' && next == '/')
				st = CODE, out[++i] = ' ';
			break;
		case STRING:
		case CHAR:
			if (c == '\\' && next)
				out[++i] = next == '\n' ? '\n' : ' ';
			else if ((st == STRING && c == '"') || (st == CHAR && c == '\'') || c == '\n')
				st = CODE;
			break;
		}
	}
	out[n] = '\0';
	return out;
}

/* --- tokens --- */

struct tok {
	const char *s;
	int len;
	int line;
};

static int is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }
static int tok_is(const struct tok *t, const char *text)
{
	return (int)strlen(text) == t->len && memcmp(t->s, text, (size_t)t->len) == 0;
}
static int tok_ident(const struct tok *t)
{
	return isalpha((unsigned char)t->s[0]) || t->s[0] == '_';
}

/* Tokens of text[from, to). Returns the count, or -1 without memory. */
static int tokenize(const char *text, size_t from, size_t to, int line, struct tok **out)
{
	int count = 0, cap = 0;
	struct tok *v = NULL;

	for (size_t i = from; i < to;) {
		char c = text[i];
		if (c == '\n' || isspace((unsigned char)c)) {
			line += c == '\n';
			i++;
			continue;
		}
		size_t len = 1;
		if (is_ident_char(c))
			while (i + len < to && (is_ident_char(text[i + len]) ||
						(isdigit((unsigned char)c) && text[i + len] == '.')))
				len++;
		else if ((c == '<' || c == '>') && i + 2 < to && text[i + 1] == c && text[i + 2] == c)
			len = 3;
		if (count == cap) {
			struct tok *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 1024) * sizeof(*v));
			if (!nv) {
				free(v);
				return -1;
			}
			v = nv;
		}
		v[count++] = (struct tok){ text + i, (int)len, line };
		i += len;
	}
	*out = v;
	return count;
}

/* match[i]: the partner of a bracket token, else -1. *unbalanced: some
 * bracket has no partner of its kind. */
static int *match_brackets(const struct tok *t, int n, int *unbalanced)
{
	int *match = malloc((size_t)(n ? n : 1) * sizeof(int));
	int *stack = malloc((size_t)(n ? n : 1) * sizeof(int)), depth = 0;
	static const char pairs[] = "()[]{}";

	if (!match || !stack) {
		free(match);
		free(stack);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		match[i] = -1;
		char c = t[i].len == 1 ? t[i].s[0] : 0;
		if (c == '(' || c == '[' || c == '{') {
			stack[depth++] = i;
		} else if (c == ')' || c == ']' || c == '}') {
			int o = depth > 0 ? stack[--depth] : -1;
			if (o < 0 || strchr(pairs, t[o].s[0])[1] != c) {
				*unbalanced = 1;
				continue;
			}
			match[o] = i;
			match[i] = o;
		}
	}
	*unbalanced |= depth != 0;
	free(stack);
	return match;
}

static const char *const keywords[] = {
	"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case",
	"defined", "__attribute__", "alignof", "_Alignof", "typeof", "__typeof__",
	"decltype", "static_assert", "_Static_assert", NULL,
};

static int is_keyword(const struct tok *t)
{
	for (int i = 0; keywords[i]; i++)
		if (tok_is(t, keywords[i]))
			return 1;
	return 0;
}

/* --- name classes --- */

static int has_api_prefix(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(name, prefix, n) == 0 && isupper((unsigned char)name[n]);
}

int audit_is_library(const char *name)
{
	return has_api_prefix(name, "cuda") || has_api_prefix(name, "cudnn") ||
	       has_api_prefix(name, "cublas") || has_api_prefix(name, "nccl");
}

static int is_kernel_wrapper(const char *name) { return strncmp(name, "gpu_k_", 6) == 0; }

static int in_list(const char *name, const char *const *list)
{
	for (int i = 0; list && list[i]; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

int audit_is_alloc(const char *name)
{
	static const char *const host[] = {
		"malloc", "calloc", "realloc", "free", "strdup", "strndup", "aligned_alloc",
		"posix_memalign", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
		"cudaEventDestroy", "cudaStreamDestroy", "cublasCreate", "cublasDestroy",
		"cudnnCreate", "cudnnDestroy", "ncclCommDestroy", NULL,
	};
	static const char *const prefixes[] = {
		"cudaMalloc", "cudaFree", "cudaEventCreate", "cudaStreamCreate", "cudnnCreate",
		"cudnnDestroy", "ncclCommInit", "ncclMemAlloc", "ncclMemFree", NULL,
	};

	if (in_list(name, host))
		return 1;
	for (int i = 0; prefixes[i]; i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

int audit_is_sync(const char *name)
{
	size_t n = strlen(name);

	if (strcmp(name, "cudaDeviceSynchronize") == 0 || strcmp(name, "cudaThreadSynchronize") == 0 ||
	    strcmp(name, "cudaStreamSynchronize") == 0 || strcmp(name, "cudaEventSynchronize") == 0)
		return 1;
	if (strncmp(name, "cudaMemcpy", 10) == 0 || strncmp(name, "cudaMemset", 10) == 0)
		return n < 5 || strcmp(name + n - 5, "Async") != 0;
	return 0;
}

/* A call that puts work on a stream, which its macro also counts
 * (gpu_launches.h): copies and fills, cuDNN's and cuBLAS's compute,
 * cuDNN's algorithm timing (Find). */
static int counted(const char *call, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(call, *names) == 0)
			return 1;
	return 0;
}

const char *audit_checker_for(const char *call)
{
	static const char *const copies[] = { "cudaMemcpyAsync", "cudaMemsetAsync", "cudaMemcpy2DAsync",
		"cudaMemcpyPeerAsync", NULL };
	static const char *const cudnn[] = { "cudnnConvolutionForward", "cudnnConvolutionBackwardData",
		"cudnnConvolutionBackwardFilter", "cudnnConvolutionBackwardBias", "cudnnBackendExecute",
		"cudnnActivationForward", "cudnnActivationBackward", "cudnnAddTensor", "cudnnOpTensor",
		"cudnnPoolingForward", "cudnnPoolingBackward", "cudnnTransformTensor", NULL };
	static const char *const finds[] = { "cudnnFindConvolutionForwardAlgorithm",
		"cudnnFindConvolutionBackwardDataAlgorithm", "cudnnFindConvolutionBackwardFilterAlgorithm",
		"cudnnFindConvolutionForwardAlgorithmEx", "cudnnFindConvolutionBackwardDataAlgorithmEx",
		"cudnnFindConvolutionBackwardFilterAlgorithmEx", NULL };
	static const char *const cublas[] = { "cublasGemmEx", "cublasSgemm", "cublasSgemm_v2",
		"cublasGemmStridedBatchedEx", "cublasGemmBatchedEx", NULL };

	if (counted(call, copies))
		return "GPU_COPY";
	if (counted(call, cudnn) || strncmp(call, "cudnnBatchNormalization", 23) == 0)
		return "GPU_CUDNN_RUN";
	if (counted(call, cublas))
		return "GPU_CUBLAS_RUN";
	if (counted(call, finds))
		return "GPU_CUDNN_FIND";
	if (has_api_prefix(call, "cudnn"))
		return "GPU_CUDNN";
	if (has_api_prefix(call, "cublas"))
		return "GPU_CUBLAS";
	if (has_api_prefix(call, "cuda") || is_kernel_wrapper(call))
		return "GPU_CUDA";
	return NULL;
}

static int interesting(const char *name)
{
	return audit_is_library(name) || is_kernel_wrapper(name) || audit_is_alloc(name);
}

/* --- sites --- */

struct scan {
	const char *file;
	const struct tok *t;
	const int *match;
	int n;
	const char *func;        /* current function, or the macro's "#define NAME" */
	int body_end;            /* last token of the function body */
	struct audit_sites *out;
};

static void copy_tok(char *dst, size_t cap, const struct tok *t, const char *suffix)
{
	snprintf(dst, cap, "%.*s%s", t->len, t->s, suffix);
}

static struct audit_site *add_site(struct scan *s, int i, enum audit_kind kind)
{
	struct audit_sites *o = s->out;

	if (o->count == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 256;
		struct audit_site *v = realloc(o->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		o->v = v;
		o->cap = cap;
	}
	struct audit_site *site = &o->v[o->count++];
	memset(site, 0, sizeof(*site));
	site->file = s->file;
	site->line = s->t[i].line;
	site->kind = kind;
	snprintf(site->func, sizeof(site->func), "%s", s->func);
	return site;
}

/* Start of the statement holding token i (after the last ; { } at its level). */
static int statement_start(const struct scan *s, int i)
{
	while (i > 0) {
		const struct tok *p = &s->t[i - 1];
		if (tok_is(p, ";") || tok_is(p, "{") || tok_is(p, "}"))
			break;
		i = (tok_is(p, ")") || tok_is(p, "]")) && s->match[i - 1] >= 0 ? s->match[i - 1] : i - 1;
	}
	return i;
}

/* The call at i is a statement of its own (its value unused). */
static int discarded(const struct scan *s, int i)
{
	int close = s->match[i + 1], p = i - 1;

	if (close < 0 || close + 1 >= s->n || !tok_is(&s->t[close + 1], ";"))
		return 0;
	while (p >= 0 && tok_is(&s->t[p], ")") && s->match[p] > 0) {
		const struct tok *before = &s->t[s->match[p] - 1];
		if (tok_is(before, "if") || tok_is(before, "while") || tok_is(before, "for") ||
		    tok_is(before, "switch"))
			return 1;
		p = s->match[p] - 1;   /* a cast: (void), (int), ... */
	}
	if (p < 0 || tok_is(&s->t[p], ";") || tok_is(&s->t[p], "{") || tok_is(&s->t[p], "}") ||
	    tok_is(&s->t[p], "else") || tok_is(&s->t[p], "do"))
		return 1;
	if (tok_is(&s->t[p], ":")) {   /* a label, unless the else of a ?: */
		for (int q = statement_start(s, p); q < p; q++)
			if (tok_is(&s->t[q], "?"))
				return 0;
		return 1;
	}
	return 0;
}

/* Name of the call whose only argument is the call at i, or "". */
static void wrapper_of(const struct scan *s, int i, int open, char *dst, size_t cap)
{
	dst[0] = '\0';
	if (open == i - 1 && open > 0 && tok_ident(&s->t[open - 1]) &&
	    s->match[i + 1] >= 0 && s->match[i + 1] + 1 == s->match[open])
		copy_tok(dst, cap, &s->t[open - 1], "");
}

/* After the launch at i, before any other return (or the end): a `return
 * cudaGetLastError()` or a GPU_CUDA(cudaGetLastError()). */
static int last_error_checked(const struct scan *s, int i, int end)
{
	for (int j = i + 1; j <= end && j + 2 < s->n; j++) {
		if (tok_is(&s->t[j], "return"))
			return tok_is(&s->t[j + 1], "cudaGetLastError") && tok_is(&s->t[j + 2], "(");
		if (tok_is(&s->t[j], "GPU_CUDA") && tok_is(&s->t[j + 1], "(") &&
		    tok_is(&s->t[j + 2], "cudaGetLastError"))
			return 1;
	}
	return 0;
}

/* The kernel's name before `<<<` (skipping template arguments). */
static void kernel_name(const struct scan *s, int i, char *dst, size_t cap)
{
	int j = i - 1, depth = 0;

	while (j >= 0 && (depth > 0 || tok_is(&s->t[j], ">"))) {
		depth += tok_is(&s->t[j], ">") - tok_is(&s->t[j], "<");
		j--;
	}
	if (j >= 0 && tok_ident(&s->t[j]))
		copy_tok(dst, cap, &s->t[j], "<<<");
	else
		snprintf(dst, cap, "<<<");
}

/* Records the sites among tokens [from, to], with s->func as their function. */
static int scan_body(struct scan *s, int from, int to, int open_paren)
{
	int stack[256], depth = 0;

	stack[depth++] = open_paren;
	for (int i = from; i <= to && i < s->n; i++) {
		const struct tok *t = &s->t[i];
		if (tok_is(t, "(") && depth < 256)
			stack[depth++] = i;
		else if (tok_is(t, ")") && depth > 1)
			depth--;
		if (tok_is(t, "<<<")) {
			struct audit_site *site = add_site(s, i, AUDIT_LAUNCH);
			if (!site)
				return -1;
			kernel_name(s, i, site->call, sizeof(site->call));
			site->launch_checked = last_error_checked(s, i, s->body_end);
			continue;
		}
		if (!tok_ident(t) || i + 1 >= s->n || !tok_is(&s->t[i + 1], "(") || is_keyword(t))
			continue;
		char name[64];
		copy_tok(name, sizeof(name), t, "");
		if (!interesting(name))
			continue;
		struct audit_site *site = add_site(s, i, AUDIT_CALL);
		if (!site)
			return -1;
		snprintf(site->call, sizeof(site->call), "%s", name);
		wrapper_of(s, i, stack[depth - 1], site->wrapper, sizeof(site->wrapper));
		site->discarded = discarded(s, i);
		site->returned = i > 0 && tok_is(&s->t[i - 1], "return");
	}
	return 0;
}

/* The body of a #define: its calls are sites in "#define NAME". */
static int scan_macro(const char *file, const char *text, size_t from, size_t to, int line,
		      struct audit_sites *out)
{
	struct tok *t = NULL;
	int n = tokenize(text, from, to, line, &t), rc = -1, unbalanced = 0;
	/* a macro body may hold half a pair (BEGIN {): brackets matched as far as they go */
	int *match = n >= 0 ? match_brackets(t, n, &unbalanced) : NULL;
	char func[64];

	if (n >= 3 && match) {   /* # define NAME ... */
		snprintf(func, sizeof(func), "#define %.*s", t[2].len, t[2].s);
		struct scan s = { file, t, match, n, func, n - 1, out };
		int body = 3;
		if (body < n && tok_is(&t[body], "(") && t[body].s == t[2].s + t[2].len)
			body = match[body] + 1;   /* function-like: skip its parameters */
		rc = scan_body(&s, body, n - 1, -1);
	} else if (n >= 0 && match) {
		rc = 0;
	}
	free(match);
	free(t);
	return rc;
}

/* Scans each preprocessor directive's macro body, then blanks it. */
static int take_directives(const char *file, char *text, struct audit_sites *out)
{
	int line = 1;

	for (char *p = text; *p;) {
		char *q = p;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != '#') {
			char *nl = strchr(p, '\n');
			if (!nl)
				break;
			p = nl + 1;
			line++;
			continue;
		}
		char *end = q;   /* through continuation lines */
		int lines = 0;
		while (*end && !(*end == '\n' && end[-1] != '\\'))
			lines += *end++ == '\n';
		if (strncmp(q + 1 + strspn(q + 1, " \t"), "define", 6) == 0 &&
		    scan_macro(file, text, (size_t)(q - text), (size_t)(end - text), line, out))
			return -1;
		for (char *b = p; b < end; b++)
			if (*b != '\n')
				*b = ' ';
		line += lines;
		p = end;
	}
	return 0;
}

/* Function definitions at file scope: NAME ( ... ) { body }. */
static int scan_functions(struct scan *s)
{
	for (int i = 0; i < s->n; i++) {
		if (!tok_is(&s->t[i], "{") || i < 2 || !tok_is(&s->t[i - 1], ")") ||
		    s->match[i - 1] < 1 || s->match[i] < 0)
			continue;
		const struct tok *name = &s->t[s->match[i - 1] - 1];
		int end = s->match[i];
		if (tok_ident(name) && !is_keyword(name)) {
			char func[64];
			copy_tok(func, sizeof(func), name, "");
			s->func = func;
			s->body_end = end;
			if (scan_body(s, i + 1, end - 1, -1))
				return -1;
		}
		i = end;   /* whatever it was (function, struct, initializer), skip it */
	}
	return 0;
}

int audit_scan(const char *file, const char *src, struct audit_sites *out)
{
	char *text = audit_strip(src);
	struct tok *t = NULL;
	int *match = NULL, n = -1, rc = -1, unbalanced = 0;

	if (text && take_directives(file, text, out) == 0 &&
	    (n = tokenize(text, 0, strlen(text), 1, &t)) >= 0 &&
	    (match = match_brackets(t, n, &unbalanced)) && !unbalanced) {
		struct scan s = { file, t, match, n, "", -1, out };
		rc = scan_functions(&s);
	}
	free(match);
	free(t);
	free(text);
	return rc;
}

void audit_sites_free(struct audit_sites *s)
{
	free(s->v);
	s->v = NULL;
	s->count = s->cap = 0;
}

/* --- rules --- */

static void report(struct audit_report *r, const struct audit_site *site, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(struct audit_report *r, const struct audit_site *site, const char *fmt, ...)
{
	size_t room = sizeof(r->text) - r->len;
	va_list ap;

	r->violations++;
	if (room < 2)
		return;
	int k = snprintf(r->text + r->len, room, "%s:%d: %s in %s: ", site->file, site->line,
			 site->call, site->func[0] ? site->func : "(file scope)");
	if (k > 0 && (size_t)k < room) {
		va_start(ap, fmt);
		k += vsnprintf(r->text + r->len + k, room - (size_t)k, fmt, ap);
		va_end(ap);
	}
	if (k > 0 && (size_t)k + 1 < room) {
		r->text[r->len + (size_t)k] = '\n';
		r->text[r->len + (size_t)k + 1] = '\0';
		r->len += (size_t)k + 1;
	} else {
		r->len = sizeof(r->text) - 1;   /* full: the count still grows */
	}
}

static int is_macro(const struct audit_site *site) { return strncmp(site->func, "#define ", 8) == 0; }

/* pattern: a path, or "*SUFFIX" (any file ending in SUFFIX). */
static int file_matches(const char *pattern, const char *file)
{
	size_t n = strlen(file), k = strlen(pattern);

	if (pattern[0] != '*')
		return strcmp(pattern, file) == 0;
	return n >= k - 1 && strcmp(file + n - (k - 1), pattern + 1) == 0;
}

static int allowed(const struct audit_allow *list, const struct audit_site *site, int *used)
{
	for (int i = 0; list && list[i].file; i++) {
		const struct audit_allow *a = &list[i];
		if (!file_matches(a->file, site->file) || strcmp(a->call, site->call) != 0 ||
		    (strcmp(a->func, "*") != 0 && strcmp(a->func, site->func) != 0) ||
		    (a->returned_only && !site->returned))
			continue;
		if (used)
			used[i]++;
		return 1;
	}
	return 0;
}

int audit_rule_checked(const struct audit_sites *s, const struct audit_policy *p,
		       int *used, struct audit_report *r)
{
	int before = r->violations;

	for (size_t i = 0; i < s->count; i++) {
		const struct audit_site *site = &s->v[i];
		if (site->kind != AUDIT_CALL ||
		    !(audit_is_library(site->call) || is_kernel_wrapper(site->call)) ||
		    in_list(site->call, p->status_text))
			continue;
		const char *want = audit_checker_for(site->call);
		if (want && strcmp(site->wrapper, want) == 0)
			continue;
		if (allowed(p->unchecked, site, used))
			continue;
		if (in_list(site->file, p->hand_checked) && !site->discarded && !is_macro(site))
			continue;
		if (is_macro(site))
			report(r, site, "rule 1 (checked): inside a macro body, where the audit "
			       "cannot see how its status is used");
		else if (in_list(site->file, p->hand_checked))
			report(r, site, "rule 1 (checked): status discarded");
		else if (site->wrapper[0] && want)
			report(r, site, "rule 1 (checked): wrapped in %s, not %s (%s)", site->wrapper, want,
			       strncmp(want, site->wrapper, strlen(site->wrapper)) == 0 ||
			       (!strcmp(want, "GPU_COPY") && !strcmp(site->wrapper, "GPU_CUDA"))
			       ? "work on the device, not counted" : "wrong library's error string");
		else
			report(r, site, "rule 1 (checked): not the direct argument of %s%s",
			       want ? want : "a checking macro",
			       site->discarded ? " (status discarded)" : "");
	}
	return r->violations - before;
}

int audit_rule_launches(const struct audit_sites *s, struct audit_report *r)
{
	int before = r->violations;

	for (size_t i = 0; i < s->count; i++)
		if (s->v[i].kind == AUDIT_LAUNCH && !s->v[i].launch_checked)
			report(r, &s->v[i], "rule 1 (checked): kernel launch not followed by "
			       "`return cudaGetLastError()` or GPU_CUDA(cudaGetLastError()) "
			       "before any other return of the function");
	return r->violations - before;
}

int audit_rule_alloc(const struct audit_sites *s, const struct audit_policy *p,
		     int *used, struct audit_report *r)
{
	int before = r->violations;

	for (size_t i = 0; i < s->count; i++) {
		const struct audit_site *site = &s->v[i];
		int ok = 0;
		if (site->kind != AUDIT_CALL || !audit_is_alloc(site->call))
			continue;
		for (int k = 0; !ok && p->allocating && p->allocating[k].file; k++) {
			ok = strcmp(p->allocating[k].file, site->file) == 0 &&
			     strcmp(p->allocating[k].func, site->func) == 0;
			if (ok && used)
				used[k]++;
		}
		if (!ok)
			report(r, site, "rule 2 (no per-step allocation): allocates or releases "
			       "outside the create/open/destroy/grow-on-first-use functions");
	}
	return r->violations - before;
}

int audit_rule_sync(const struct audit_sites *s, const struct audit_policy *p,
		    int *used, struct audit_report *r)
{
	int before = r->violations;

	for (size_t i = 0; i < s->count; i++) {
		const struct audit_site *site = &s->v[i];
		if (site->kind != AUDIT_CALL || !audit_is_sync(site->call) ||
		    allowed(p->waiting, site, used))
			continue;
		report(r, site, "rule 3 (no synchronous copy on the step path): %s outside "
		       "the functions allowed to wait", strstr(site->call, "Synchronize") ?
		       "host wait" : "synchronous copy/set");
	}
	return r->violations - before;
}
