/* placement.c - pure placement logic (see placement.h): which GPUs were
 * granted (from the environment's lists), which GPU a local task owns, what
 * it sees, which NUMA node, socket and CPUs it gets.
 * Implements L1 (one process per GPU, oversubscription refused), L2 (bind
 * to the CPUs nearest the GPU: its NUMA node, its socket, or whole cores
 * of them by split.c; `--map-by socket` for CPU-only steps) and L3 (each
 * process sees its own GPU first) of docs/practices.md.
 * What it does not do: read the topology (topology.c), touch the process
 * (task.c) or know about Slurm.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "split.h"

static void add_note(struct placement_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_note(struct placement_result *res, const char *fmt, ...)
{
	size_t used = strlen(res->note);
	if (used && used + 2 < sizeof(res->note)) {
		strcat(res->note, "; ");
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->note + used, sizeof(res->note) - used, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------- GPU order */

struct order_key {
	int unknown, socket, topo_index, granted_index;
};

static int compare_keys(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;
	if (x->unknown != y->unknown)
		return x->unknown - y->unknown;
	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->topo_index != y->topo_index)
		return x->topo_index < y->topo_index ? -1 : 1;
	return x->granted_index - y->granted_index;
}

void placement_gpu_order(const struct placement_request *req, int *out)
{
	struct order_key keys[PLACEMENT_MAX_GPUS];
	int n = req->granted_count;
	for (int i = 0; i < n; i++) {
		int g = req->granted_gpu[i];
		int known = g >= 0 && g < req->topo->gpu_count;
		int s = known ? req->topo->gpus[g].socket : -1;
		keys[i] = (struct order_key){
			.unknown = !known,
			.socket = s >= 0 ? s : INT_MAX,   /* GPUs under Machine after the sockets */
			.topo_index = known ? g : INT_MAX,
			.granted_index = i,
		};
	}
	qsort(keys, (size_t)n, sizeof(keys[0]), compare_keys);
	for (int i = 0; i < n; i++)
		out[i] = keys[i].granted_index;
}

/* ------------------------------------------------------------------ CPUs */

/* The n-th package with CPUs (hwloc keeps packages a restricted capture
 * emptied), cycling; -1 when none has CPUs. */
static int nth_socket_with_cpus(const struct placement_topo *t, int n)
{
	int with = 0;
	for (int s = 0; s < t->socket_count; s++)
		with += CPU_COUNT(&t->sockets[s].cpus) > 0;
	for (int s = 0, k = 0; with > 0 && s < t->socket_count; s++)
		if (CPU_COUNT(&t->sockets[s].cpus) > 0 && k++ == n % with)
			return s;
	return -1;
}

/* Where local task j belongs: its GPU's package and NUMA node; CPU-only
 * steps go round robin over the packages (`--map-by socket`). */
static struct split_home home_of_task(const struct placement_request *req, const int *order, int j)
{
	const struct placement_topo *t = req->topo;
	struct split_home h = { -1, -1 };
	if (req->granted_count == 0) {
		h.socket = nth_socket_with_cpus(t, j);
		return h;
	}
	int g = req->granted_gpu[order[j % req->granted_count]];
	if (g < 0 || g >= t->gpu_count)
		return h;
	h.socket = t->gpus[g].socket;
	h.numa = t->gpus[g].numa;
	if (h.numa >= 0 && (h.socket < 0 || t->numas[h.numa].socket != h.socket))
		h.socket = t->numas[h.numa].socket;
	return h;
}

/* This task's share of whole cores (split.c), every local task's home
 * computed the same way. */
static int core_share(const struct placement_request *req, const int *order,
		      struct placement_result *res, char *err, size_t err_len)
{
	int n = req->local_count, shared = 0;
	struct split_home *home = calloc((size_t)n, sizeof(*home));
	cpu_set_t *cpus = calloc((size_t)n, sizeof(*cpus));
	int rc = -1;
	if (home && cpus) {
		for (int j = 0; j < n; j++)
			home[j] = home_of_task(req, order, j);
		rc = split_cores(req->topo, &req->allowed, home, n, cpus, &shared);
	}
	if (rc == 0) {
		res->cpus = cpus[req->local_id];
		if (shared)
			add_note(res, "fewer allowed cores than tasks near their GPUs: tasks share cores");
	} else {
		snprintf(err, err_len, "hvd: placement: '%d tasks': out of memory", n);
	}
	free(home);
	free(cpus);
	return rc;
}

/* The allowed CPUs of domain (a NUMA node's or a package's); empty: left
 * as allowed, with a note. */
static void bind_to(const struct placement_request *req, const cpu_set_t *domain, const char *what,
		    int index, struct placement_result *res)
{
	char want[256], have[256];
	CPU_AND(&res->cpus, domain, &req->allowed);
	if (CPU_COUNT(&res->cpus) > 0)
		return;
	placement_format_cpus(domain, want, sizeof(want));
	placement_format_cpus(&req->allowed, have, sizeof(have));
	add_note(res, "%s %d CPUs '%s' are outside the allowed CPUs '%s': left as allowed",
		 what, index, want, have);
	res->cpus = req->allowed;
}

static void note_no_locality(const struct placement_request *req, struct placement_result *res)
{
	int g = res->granted_index >= 0 ? req->granted_gpu[res->granted_index] : -1;
	if (res->granted_index < 0)
		add_note(res, "topology has no packages: CPUs split among the tasks");
	else if (g < 0 || g >= req->topo->gpu_count)
		add_note(res, "granted GPU #%d is not in the topology: CPUs split among the tasks",
			 res->granted_index);
	else
		add_note(res, "GPU %s has no single package near it in the topology: the machine's "
			 "CPUs split among the tasks", req->topo->gpus[g].busid);
}

static int bind_cpus(const struct placement_request *req, const int *order, struct split_home h,
		     struct placement_result *res, char *err, size_t err_len)
{
	const struct placement_topo *t = req->topo;
	if (req->bind == HVD_BIND_NONE) {
		res->cpus = req->allowed;
		return 0;
	}
	if (req->bind == HVD_BIND_CORE || h.socket < 0) {
		if (h.socket < 0)
			note_no_locality(req, res);
		if (core_share(req, order, res, err, err_len) != 0)
			return -1;
		if (CPU_COUNT(&res->cpus) > 0)
			return 0;
		if (h.socket < 0) {
			res->cpus = req->allowed;
			return 0;
		}
	}
	if (req->bind == HVD_BIND_NUMA && h.numa >= 0) {
		CPU_AND(&res->cpus, &t->numas[h.numa].cpus, &req->allowed);
		if (CPU_COUNT(&res->cpus) > 0)
			return 0;
		add_note(res, "NUMA node %d has no allowed CPUs: bound to socket %d",
			 t->numas[h.numa].os_index, h.socket);
	}
	bind_to(req, &t->sockets[h.socket].cpus, "socket", h.socket, res);
	return 0;
}

/* The task's NUMA node (its GPU's, else the one most of its CPUs are on),
 * then every other node its CPUs touch; and how many of its CPUs are on
 * its GPU's node (else near its GPU). */
static void describe_numa(const struct placement_request *req, struct split_home h,
			  struct placement_result *res)
{
	const struct placement_topo *t = req->topo;
	cpu_set_t both;
	int best = h.numa, most = 0;
	for (int u = 0; best < 0 && u < t->numa_count; u++) {
		CPU_AND(&both, &t->numas[u].cpus, &res->cpus);
		if (CPU_COUNT(&both) > most) {
			most = CPU_COUNT(&both);
			best = u;
		}
	}
	res->numa_node = best >= 0 ? t->numas[best].os_index : -1;
	if (best >= 0)
		res->numa[res->numa_count++] = res->numa_node;
	for (int u = 0; u < t->numa_count && res->numa_count < PLACEMENT_MAX_NUMA; u++) {
		CPU_AND(&both, &t->numas[u].cpus, &res->cpus);
		if (u != best && CPU_COUNT(&both) > 0)
			res->numa[res->numa_count++] = t->numas[u].os_index;
	}
	int g = res->granted_index >= 0 ? req->granted_gpu[res->granted_index] : -1;
	res->local_cpus = -1;
	if (g < 0 || g >= t->gpu_count)
		return;
	CPU_AND(&both, h.numa >= 0 ? &t->numas[h.numa].cpus : &t->gpus[g].near_cpus, &res->cpus);
	res->local_cpus = CPU_COUNT(&both);
}

/* ------------------------------------------------------------------ GPUs */

static int pick_gpu(const struct placement_request *req, const int *order,
		    struct placement_result *res, char *err, size_t err_len)
{
	int n = req->granted_count;
	if (req->local_count > n) {
		if (!req->oversubscribe_warn) {
			snprintf(err, err_len, "hvd: oversubscribed: '%d tasks, %d GPUs on %s': "
				 "use --ntasks-per-node=%d (sites can allow it with oversubscribe=warn)",
				 req->local_count, n, req->host, n);
			return -1;
		}
		add_note(res, "oversubscribed: '%d tasks, %d GPUs on %s': tasks share GPUs "
			 "(oversubscribe=warn)", req->local_count, n, req->host);
	}
	res->granted_index = order[req->local_id % n];
	res->order[res->order_count++] = res->granted_index;
	if (req->gpu_mode == HVD_GPU_ONLY)
		return 0;
	for (int i = 0; i < n; i++)
		if (i != res->granted_index)
			res->order[res->order_count++] = i;
	return 0;
}

static int check_request(const struct placement_request *req, char *err, size_t err_len)
{
	if (req->granted_count < 0 || req->granted_count > PLACEMENT_MAX_GPUS) {
		snprintf(err, err_len, "hvd: granted GPUs: '%d': more than %d", req->granted_count,
			 PLACEMENT_MAX_GPUS);
		return -1;
	}
	if (req->local_count < 1 || req->local_id < 0 || req->local_id >= req->local_count) {
		snprintf(err, err_len, "hvd: local task: '%d of %d': out of range", req->local_id,
			 req->local_count);
		return -1;
	}
	return 0;
}

int placement_compute(const struct placement_request *req, struct placement_result *res,
		      char *err, size_t err_len)
{
	int order[PLACEMENT_MAX_GPUS];
	memset(res, 0, sizeof(*res));
	res->granted_index = -1;
	res->socket = res->numa_node = -1;
	if (check_request(req, err, err_len) != 0)
		return -1;
	placement_gpu_order(req, order);
	if (req->granted_count > 0 && pick_gpu(req, order, res, err, err_len) != 0)
		return -1;
	struct split_home h = home_of_task(req, order, req->local_id);
	res->socket = h.socket;
	if (bind_cpus(req, order, h, res, err, err_len) != 0)
		return -1;
	describe_numa(req, h, res);
	return 0;
}

/* ----------------------------------------------------------------- lists */

int placement_format_cpus(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		int j = i;
		while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set))
			j++;
		int n = (j == i) ? snprintf(buf + used, len - used, "%s%d", used ? "," : "", i)
				 : snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", i, j);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
		i = j;
	}
	return 0;
}

int placement_split_list(const char *list, char entries[][64], int max)
{
	int n = 0;
	const char *p = list;
	if (!list || !list[0])
		return 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= 64 || n >= max)
			return -1;
		memcpy(entries[n], p, len);
		entries[n][len] = 0;
		n++;
		if (!comma)
			return n;
		p = comma + 1;
	}
}

int placement_parse_ids(const char *list, int *ids, int max)
{
	char entries[PLACEMENT_MAX_GPUS][64];
	int n = placement_split_list(list, entries, max < PLACEMENT_MAX_GPUS ? max : PLACEMENT_MAX_GPUS);
	for (int i = 0; i < n; i++) {
		long v = 0;
		for (const char *c = entries[i]; *c; c++) {
			if (*c < '0' || *c > '9' || v > 1000000)
				return -1;
			v = v * 10 + (*c - '0');
		}
		ids[i] = (int)v;
	}
	return n;
}

int placement_granted(const char *visible, const char *step_gpus,
		      char labels[PLACEMENT_MAX_GPUS][64], int ids[PLACEMENT_MAX_GPUS],
		      char *err, size_t err_len)
{
	int n = placement_split_list(visible, labels, PLACEMENT_MAX_GPUS);
	if (n < 0) {
		snprintf(err, err_len, "hvd: CUDA_VISIBLE_DEVICES: '%.200s': not a list of at most %d GPUs",
			 visible, PLACEMENT_MAX_GPUS);
		return -1;
	}
	if (placement_parse_ids(step_gpus, ids, PLACEMENT_MAX_GPUS) == n)
		return n;
	for (int i = 0; i < n; i++)
		if (placement_parse_ids(labels[i], &ids[i], 1) != 1)
			ids[i] = -1;
	return n;
}

static int in_list(const char *label, const char *list)
{
	char entries[PLACEMENT_MAX_GPUS][64];
	int n = placement_split_list(list, entries, PLACEMENT_MAX_GPUS);
	for (int i = 0; i < n; i++)
		if (strcmp(entries[i], label) == 0)
			return 1;
	return 0;
}

int placement_slurm_bound(const char *step_visible, const char *task_visible)
{
	char entries[PLACEMENT_MAX_GPUS][64];
	if (!task_visible[0] || strcmp(step_visible, task_visible) == 0)
		return 0;
	int n = placement_split_list(task_visible, entries, PLACEMENT_MAX_GPUS);
	for (int i = 0; i < n; i++)
		if (!in_list(entries[i], step_visible))
			return 0;
	return n > 0;
}
