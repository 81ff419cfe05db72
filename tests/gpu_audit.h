/* gpu_audit.h - a source audit of the GPU code, as pure functions over
 * text (group gpu-audit, tests/test_gpu_audit.c): comments and literals
 * stripped, every call of a CUDA runtime, cuDNN, cuBLAS or NCCL function,
 * of a gpu_k_* kernel wrapper, of an allocator, and every kernel launch
 * (<<<...>>>) found with file:line, its enclosing C function and how its
 * status is used; then three rules: (1) statuses are checked, (2)
 * allocation only where a policy says (create/open/destroy/grow), (3) no
 * synchronous copy or wait except where a policy says.
 * What this is not: a C parser. It knows function definitions (a name,
 * its parameter list, then `{`), calls (a name, then `(`), and macro
 * bodies (#define: calls there are reported as inside a macro).
 */
#ifndef HVD_TESTS_GPU_AUDIT_H
#define HVD_TESTS_GPU_AUDIT_H

#include <stddef.h>

enum audit_kind { AUDIT_CALL, AUDIT_LAUNCH };

struct audit_site {
	const char *file;        /* as given to audit_scan (not copied) */
	int line;
	enum audit_kind kind;
	char call[64];           /* called name; launches: "KERNEL<<<" */
	char func[64];           /* enclosing function; "#define NAME" in a macro body */
	char wrapper[32];        /* the call whose direct, only argument this is, else "" */
	int discarded;           /* status thrown away: a statement of its own or (void) */
	int returned;            /* `return CALL(...)` */
	int launch_checked;      /* launch: `return cudaGetLastError()` or
				  * GPU_CUDA(cudaGetLastError()) follows, before any
				  * other return of the function */
};

struct audit_sites {
	struct audit_site *v;
	size_t count, cap;
};

/* A copy of src with comments, string and character literals replaced by
 * spaces (newlines kept, so lines and offsets match). malloc'd. */
char *audit_strip(const char *src);

/* Appends the sites of one file's text to out. Returns 0, or -1 without
 * memory or when the brackets outside #define bodies do not pair up (e.g.
 * #if branches each opening a function: the audit would not see it). */
int audit_scan(const char *file, const char *src, struct audit_sites *out);
void audit_sites_free(struct audit_sites *s);

/* Name classes. */
int audit_is_library(const char *name);  /* cuda*, cudnn*, cublas*, nccl* API */
int audit_is_alloc(const char *name);    /* allocates or releases memory or a handle */
int audit_is_sync(const char *name);     /* synchronous copy/set, or a host wait */
/* The checking macro for a call (GPU_CUDA, GPU_CUDNN, GPU_CUBLAS; for a
 * call that puts work on a stream the one that also counts it: GPU_COPY,
 * GPU_CUDNN_RUN, GPU_CUBLAS_RUN), NULL when the project has none (NCCL).
 * gpu_k_* wrappers go through GPU_CUDA (they count their launches). */
const char *audit_checker_for(const char *call);

/* One exception of rules 1 and 3: call in (file, func), with why. file
 * "*.cu": any file ending so; func "*": any function of the file.
 * returned_only: only `return CALL(...)`. */
struct audit_allow {
	const char *file, *func, *call;
	int returned_only;
	const char *reason;
};

/* One place rule 2 allows to allocate: (file, func), with why. */
struct audit_place {
	const char *file, *func;
	const char *reason;
};

struct audit_policy {
	const char *const *status_text;       /* names returning text, not a status (NULL-ended) */
	const char *const *hand_checked;      /* files checking statuses by hand, without
					       * macros: a used status passes (NULL-ended) */
	const struct audit_allow *unchecked;  /* rule 1 ({0}-ended) */
	const struct audit_place *allocating; /* rule 2 ({0}-ended) */
	const struct audit_allow *waiting;    /* rule 3 ({0}-ended) */
};

/* The project's policy for trainer/backend/gpu and runtime/transport/comm_nccl.c
 * (gpu_audit_policy.c). */
extern const struct audit_policy gpu_audit_policy;

/* Violations, one line each: `FILE:LINE: CALL in FUNC: rule N (...): why`. */
struct audit_report {
	char text[32768];
	size_t len;
	int violations;
};

/* Each returns its number of new violations, appended to r. used (may be
 * NULL): per entry of the policy's table, how many sites it excused. */
int audit_rule_checked(const struct audit_sites *s, const struct audit_policy *p,
		       int *used, struct audit_report *r);
int audit_rule_launches(const struct audit_sites *s, struct audit_report *r);
int audit_rule_alloc(const struct audit_sites *s, const struct audit_policy *p,
		     int *used, struct audit_report *r);
int audit_rule_sync(const struct audit_sites *s, const struct audit_policy *p,
		    int *used, struct audit_report *r);

#endif
