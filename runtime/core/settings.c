/* settings.c - the one place where HVD_* variables are read and checked.
 * Every number goes through one strict parser (whole string, range); an
 * unknown HVD_* name is an error, so a typo never turns into a default.
 * What it does not do: touch the process environment or print.
 */
#include "core/settings.h"
#include "core/fail.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*env_parser)(const char *value, struct hvd_settings *s,
			      char *why, size_t whylen);

/* A setting is parsed by its own function, or by kind into its field
 * (ENV_CHOICE: an int or enum, the index of the value in help's
 * "a|b|c"). */
enum env_kind { ENV_OWN, ENV_U64, ENV_SECONDS, ENV_TEXT, ENV_NONEMPTY_TEXT, ENV_CHOICE };

struct env_row {
	const char *name;
	env_parser parse;     /* ENV_OWN; NULL: parsed elsewhere */
	const char *help;         /* the accepted form, for messages */
	enum env_kind kind;
	size_t at, size;          /* the field's offset and size in hvd_settings */
	double min, max;          /* ENV_U64, ENV_SECONDS: the range (U64: max) */
};

#define OWN(name, parse, help) { name, parse, help, ENV_OWN, 0, 0, 0, 0 }
#define FIELD(name, kind, field, help, min, max) \
	{ name, NULL, help, kind, offsetof(struct hvd_settings, field), \
	  sizeof(((struct hvd_settings *)0)->field), min, max }

static int parse_u64(const char *v, uint64_t max, uint64_t *out, char *why, size_t n)
{
	errno = 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 10); /* alone it takes " 1" and "-1" */
	if (!*v || *v == '-' || *v == '+' || *v == ' ' || errno || *end)
		return fail_msg(-1, why, n, "not a non-negative integer");
	if (x > max)
		return fail_msg(-1, why, n, "above the maximum %llu", (unsigned long long)max);
	*out = x;
	return 0;
}

static int parse_seconds(const char *v, double min, double max, double *out,
			 char *why, size_t n)
{
	errno = 0;
	char *end;
	double x = strtod(v, &end);
	if (!*v || *v == ' ' || errno || *end || !isfinite(x))
		return fail_msg(-1, why, n, "not a number");
	if (x < min || x > max)
		return fail_msg(-1, why, n, "out of range [%g, %g]", min, max);
	*out = x;
	return 0;
}

static int parse_chunk(const char *v, struct hvd_settings *s, char *why, size_t n)
{
	if (!strcmp(v, "auto"))
		return fail_msg(-1, why, n, "no longer tuned: give bytes (default 4194304; 0 = "
				"one piece)");
	return parse_u64(v, 1ull << 30, &s->fusion_chunk_bytes, why, n);
}

/* A setting that is gone: any value is refused with its replacement. */
static int parse_shm(const char *v, struct hvd_settings *s, char *why, size_t n)
{
	return fail_msg(-1, why, n, "removed: HVD_VOTE picks how the plan cache's votes travel");
}

/* v's index among choices "a|b|c" into *out. */
static int parse_choice(const char *v, const char *choices, int *out, char *why, size_t n)
{
	size_t len = strlen(v);
	int i = 0;
	for (const char *c = choices; *c; i++) {
		size_t k = strcspn(c, "|");
		if (len && k == len && !strncmp(c, v, len)) {
			*out = i;
			return 0;
		}
		c += k + (c[k] == '|');
	}
	return fail_msg(-1, why, n, "not one of the choices");
}

static int copy_text(const char *v, char *dst, size_t cap, int allow_empty, char *why, size_t n)
{
	if (!allow_empty && !*v)
		return fail_msg(-1, why, n, "must not be empty");
	if (strlen(v) >= cap)
		return fail_msg(-1, why, n, "longer than %zu bytes", cap - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* "host:port", port 1-65535 (rank 0 listens there: a launch without PMIx
 * needs a known address). */
static int parse_coordinator(const char *v, struct hvd_settings *s, char *why, size_t n)
{
	const char *colon = strrchr(v, ':');
	uint64_t port;
	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(s->coord_host))
		return fail_msg(-1, why, n, "not host:port");
	if (parse_u64(colon + 1, 65535, &port, why, n) || port == 0)
		return fail_msg(-1, why, n, "port not in 1-65535");
	snprintf(s->coord_host, sizeof(s->coord_host), "%.*s", (int)(colon - v), v);
	s->coord_port = (uint16_t)port;
	return 0;
}

static const char by_plugin[] = "set by the hvd plugin"; /* not described: report.c shows them */

static const struct env_row env_rows[] = {
	FIELD("HVD_FUSION_THRESHOLD", ENV_U64, fusion_threshold_bytes, "bytes, 0 = no fusion",
	      0, 1ull << 40),
	OWN("HVD_FUSION_CHUNK", parse_chunk, "bytes, 0 = one piece"),
	FIELD("HVD_CYCLE_TIME_MS", ENV_SECONDS, cycle_time_ms, "milliseconds", 0, 10000),
	FIELD("HVD_COMPRESSION", ENV_CHOICE, compression, "none|fp16|bf16", 0, 0),
	FIELD("HVD_SYNC", ENV_CHOICE, sync, "0|1", 0, 0),
	OWN("HVD_SHM", parse_shm, "unset it"),
	FIELD("HVD_STALL_WARNING_S", ENV_SECONDS, stall_warning_s, "seconds, 0 = off", 0, 1e6),
	FIELD("HVD_TIMEOUT_S", ENV_SECONDS, timeout_s, "seconds", 0.5, 1e6),
	FIELD("HVD_HEARTBEAT_S", ENV_SECONDS, heartbeat_s, "seconds", 0.05, 3600),
	FIELD("HVD_BACKEND", ENV_CHOICE, backend, "auto|mpi|nccl|self|tcp|host", 0, 0),
	FIELD("HVD_VOTE", ENV_CHOICE, vote, "auto|shm|messages|ring|off", 0, 0),
	FIELD("HVD_TIMELINE", ENV_NONEMPTY_TEXT, timeline_path, "path", 0, 0),
	FIELD("HVD_SECRET_FILE", ENV_NONEMPTY_TEXT, secret_file,
	      "path of a file only its owner can read", 0, 0),
	OWN("HVD_COORDINATOR", parse_coordinator, "host:port"),
	/* a launch without PMIx: bootstrap_env.c parses them (with
	 * JOB_COMPLETION_INDEX); known here, so they are logged */
	OWN("HVD_RANK", NULL, "0 to HVD_SIZE-1, without PMIx"),
	OWN("HVD_SIZE", NULL, "ranks, without PMIx"),
	FIELD("HVD_GPU_BUSID", ENV_TEXT, gpu_busid, by_plugin, 0, 0),
	FIELD("HVD_CPUS", ENV_TEXT, cpus, by_plugin, 0, 0),
	FIELD("HVD_NUMA", ENV_TEXT, numa, by_plugin, 0, 0),
	FIELD("HVD_SOCKET", ENV_TEXT, socket, by_plugin, 0, 0),
	FIELD("HVD_BIND", ENV_TEXT, bind, by_plugin, 0, 0),
};
#define ENV_ROWS (sizeof(env_rows) / sizeof(env_rows[0]))

void settings_defaults(struct hvd_settings *s)
{
	*s = (struct hvd_settings){ .fusion_threshold_bytes = SETTINGS_DEFAULT_FUSION_BYTES,
		.fusion_chunk_bytes = SETTINGS_DEFAULT_CHUNK_BYTES, .cycle_time_ms = 1.0,
		.compression = HVD_COMPRESS_NONE, .stall_warning_s = 60.0, .timeout_s = 300.0,
		.heartbeat_s = 1.0, .backend = HVD_BACKEND_AUTO };
}

static const struct env_row *env_row_find(const char *entry, size_t name_len)
{
	for (size_t i = 0; i < ENV_ROWS; i++)
		if (strlen(env_rows[i].name) == name_len &&
		    !strncmp(env_rows[i].name, entry, name_len))
			return &env_rows[i];
	return NULL;
}

/* Edit distance; a typo of a known name is within a quarter of its length. */
static int edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	int row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j], left = row[j - 1];
			int keep = diag + (a[i - 1] != b[j - 1]), gap = (up < left ? up : left) + 1;
			row[j] = gap < keep ? gap : keep;
			diag = up;
		}
	}
	return row[lb];
}

static const struct env_row *env_near_miss(const char *entry, size_t name_len)
{
	for (size_t i = 0; i < ENV_ROWS; i++) {
		const char *known = env_rows[i].name + 4; /* after HVD_ */
		int allowed = (int)strlen(known) / 4;
		if (edit_distance(entry + 4, name_len - 4, known) <= (allowed ? allowed : 1))
			return &env_rows[i];
	}
	return NULL;
}

static int env_row_apply(const struct env_row *st, const char *v, struct hvd_settings *s,
			 char *why, size_t n)
{
	char *field = (char *)s + st->at;
	if (st->kind == ENV_U64)
		return parse_u64(v, (uint64_t)st->max, (uint64_t *)field, why, n);
	if (st->kind == ENV_SECONDS)
		return parse_seconds(v, st->min, st->max, (double *)field, why, n);
	if (st->kind == ENV_CHOICE)
		return parse_choice(v, st->help, (int *)field, why, n);
	if (st->kind != ENV_OWN)
		return copy_text(v, field, st->size, st->kind == ENV_TEXT, why, n);
	return st->parse ? st->parse(v, s, why, n) : 0;
}

/* Unknown HVD_* names that look like a typo of ours are errors; others
 * belong to other tools (the test harness's HVD_SRC, HVD_BUILD, ...). */
static int settings_parse_one(const char *entry, struct hvd_settings *s,
			      char *err, size_t errlen)
{
	size_t name_len = strcspn(entry, "=");
	const struct env_row *st = env_row_find(entry, name_len);
	if (!st) {
		const struct env_row *near = env_near_miss(entry, name_len);
		if (near)
			return fail_msg(-1, err, errlen, "hvd: %.*s: unknown variable: did you "
					"mean %s?", (int)name_len, entry, near->name);
		return 0;
	}
	const char *value = entry[name_len] ? entry + name_len + 1 : "";
	char why[160];
	if (env_row_apply(st, value, s, why, sizeof(why)))
		return fail_msg(-1, err, errlen, "hvd: %s: '%s': %s (%s)", st->name, value, why,
				st->help);
	return 0;
}

const char *settings_env(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

int settings_parse(char *const *envp, struct hvd_settings *s, char *err, size_t errlen)
{
	settings_defaults(s);
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "HVD_", 4) && settings_parse_one(envp[i], s, err, errlen))
			return -1;
	/* Defaults follow a short HVD_TIMEOUT_S; values the user set are checked. */
	if (!settings_env(envp, "HVD_STALL_WARNING_S") && s->stall_warning_s >= s->timeout_s)
		s->stall_warning_s = s->timeout_s / 2;
	if (!settings_env(envp, "HVD_HEARTBEAT_S") && s->heartbeat_s * 2 > s->timeout_s)
		s->heartbeat_s = s->timeout_s / 4;
	if (s->stall_warning_s > 0 && s->stall_warning_s >= s->timeout_s)
		return fail_msg(-1, err, errlen, "hvd: HVD_STALL_WARNING_S: '%g': must be below "
				"HVD_TIMEOUT_S (%g) or 0 to turn the warning off",
				s->stall_warning_s, s->timeout_s);
	if (s->heartbeat_s * 2 > s->timeout_s)
		return fail_msg(-1, err, errlen, "hvd: HVD_HEARTBEAT_S: '%g': must be at most "
				"half of HVD_TIMEOUT_S (%g)", s->heartbeat_s, s->timeout_s);
	return 0;
}

int settings_world(struct hvd_settings *s, const char *coordinator, const char *secret_file,
		   char *err, size_t errlen)
{
	char entry[2][1100];   /* longer than either field: a longer value is refused, not cut */
	snprintf(entry[0], sizeof(entry[0]), "HVD_COORDINATOR=%s", coordinator);
	snprintf(entry[1], sizeof(entry[1]), "HVD_SECRET_FILE=%s", secret_file);
	return settings_parse_one(entry[0], s, err, errlen) ||
	       settings_parse_one(entry[1], s, err, errlen) ? -1 : 0;
}

int settings_describe(char *const *envp, int world_given, char *out, size_t outlen)
{
	int count = 0;
	size_t used = 0;
	if (outlen)
		out[0] = '\0';
	for (size_t i = 0; envp && envp[i]; i++) {
		/* every row's name starts with HVD_: no other name is found */
		const struct env_row *st = env_row_find(envp[i], strcspn(envp[i], "="));
		if (!st || st->help == by_plugin ||
		    (world_given && strstr("HVD_RANK HVD_SIZE HVD_COORDINATOR HVD_SECRET_FILE", st->name)))
			continue;
		int w = snprintf(out + used, outlen - used, "%s%s", count ? "\n" : "", envp[i]);
		if (w < 0 || (size_t)w >= outlen - used)
			break;
		used += (size_t)w;
		count++;
	}
	return count;
}

const char *settings_compression_name(enum hvd_compression c)
{
	return c == HVD_COMPRESS_FP16 ? "fp16" : c == HVD_COMPRESS_BF16 ? "bf16" : "none";
}

int settings_compute_threads(int mask_cpus, int loader_threads)
{
	int n = mask_cpus - (loader_threads > 0 ? loader_threads : 0);
	return n >= 1 ? n : 1;
}

/* How long an agreement waits before rank 0 hears of it: well inside
 * HVD_STALL_WARNING_S and HVD_TIMEOUT_S, at most 1 s. */
double settings_escalate_s(const struct hvd_settings *s)
{
	double t = fmin(s->timeout_s / 4, 1.0);
	return s->stall_warning_s > 0 ? fmin(t, s->stall_warning_s / 2) : t;
}
