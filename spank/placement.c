/* placement.c - pure placement logic (see placement.h): which GPUs were
 * granted (from the environment's lists), which GPU a local task owns, what
 * it sees, which socket, CPUs and NUMA nodes it gets.
 * Implements L1 (one process per GPU, oversubscription refused), L2 (bind
 * to the socket nearest the GPU, `--map-by socket` for CPU-only steps) and
 * L3 (each process sees its own GPU first) of docs/practices.md.
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

static int socket_of_granted(const struct placement_request *req, int granted_index)
{
	int g = req->granted_gpu[granted_index];
	if (g < 0 || g >= req->topo->gpu_count)
		return -1;
	return req->topo->gpus[g].socket;
}

/* The socket local task j lands on (GPU steps: its GPU's; CPU-only: round
 * robin), given the hand-out order. */
static int socket_of_task(const struct placement_request *req, const int *order, int j)
{
	if (req->granted_count == 0)
		return req->topo->socket_count > 0 ? j % req->topo->socket_count : -1;
	return socket_of_granted(req, order[j % req->granted_count]);
}

/* Core mode: the allowed cores of socket s split evenly among the tasks on
 * it (rank k of m); fewer cores than tasks means neighbours share a core. */
static void split_cores(const struct placement_request *req, int s, int k, int m,
			struct placement_result *res)
{
	const struct placement_socket *sock = &req->topo->sockets[s];
	cpu_set_t usable[sock->core_count > 0 ? sock->core_count : 1];
	int c = 0;
	for (int i = 0; i < sock->core_count; i++) {
		CPU_AND(&usable[c], &sock->cores[i], &req->allowed);
		if (CPU_COUNT(&usable[c]) > 0)
			c++;
	}
	if (c == 0)
		return;   /* keep the socket's allowed CPUs */
	int first, last;
	if (c >= m) {
		first = (int)((long)k * c / m);
		last = (int)((long)(k + 1) * c / m);
	} else {
		first = (int)((long)k * c / m);
		last = first + 1;
		add_note(res, "socket %d has %d allowed core%s for %d tasks: tasks share cores",
			 s, c, c == 1 ? "" : "s", m);
	}
	CPU_ZERO(&res->cpus);
	for (int i = first; i < last; i++)
		CPU_OR(&res->cpus, &res->cpus, &usable[i]);
}

static void bind_to_socket(const struct placement_request *req, const int *order, int s,
			   struct placement_result *res)
{
	char want[256], have[256];
	const struct placement_socket *sock = &req->topo->sockets[s];
	CPU_AND(&res->cpus, &sock->cpus, &req->allowed);
	if (CPU_COUNT(&res->cpus) == 0) {
		placement_format_cpus(&sock->cpus, want, sizeof(want));
		placement_format_cpus(&req->allowed, have, sizeof(have));
		add_note(res, "socket %d CPUs '%s' are outside the allowed CPUs '%s': left as allowed",
			 s, want, have);
		res->cpus = req->allowed;
		return;
	}
	if (req->bind != HVD_BIND_CORE)
		return;
	int k = 0, m = 0;
	for (int j = 0; j < req->local_count; j++) {
		if (socket_of_task(req, order, j) != s)
			continue;
		if (j < req->local_id)
			k++;
		m++;
	}
	split_cores(req, s, k, m, res);
}

/* No package above the GPU (or GPU unknown, or no packages at all). */
static void bind_without_socket(const struct placement_request *req, struct placement_result *res)
{
	char near[256];
	int g = res->granted_index >= 0 ? req->granted_gpu[res->granted_index] : -1;
	res->cpus = req->allowed;
	if (res->granted_index < 0) {
		add_note(res, "topology has no packages: CPUs left as allowed");
		return;
	}
	if (g < 0 || g >= req->topo->gpu_count) {
		add_note(res, "granted GPU #%d is not in the topology: CPUs left as allowed",
			 res->granted_index);
		return;
	}
	const struct placement_gpu *gpu = &req->topo->gpus[g];
	cpu_set_t both;
	CPU_AND(&both, &gpu->near_cpus, &req->allowed);
	placement_format_cpus(&gpu->near_cpus, near, sizeof(near));
	if (CPU_COUNT(&both) > 0) {
		res->cpus = both;
		add_note(res, "GPU %s has no package above it: bound to its nearest CPUs '%s'",
			 gpu->busid, near);
	} else {
		add_note(res, "GPU %s has no package above it and its CPUs '%s' are not allowed: "
			 "left as allowed", gpu->busid, near);
	}
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
	res->socket = -1;
	if (check_request(req, err, err_len) != 0)
		return -1;
	placement_gpu_order(req, order);
	if (req->granted_count > 0 && pick_gpu(req, order, res, err, err_len) != 0)
		return -1;
	res->socket = socket_of_task(req, order, req->local_id);
	if (res->socket >= req->topo->socket_count)
		res->socket = -1;
	if (res->socket >= 0) {
		const struct placement_socket *sock = &req->topo->sockets[res->socket];
		res->numa_count = sock->numa_count;
		memcpy(res->numa, sock->numa, sizeof(res->numa));
	}
	if (req->bind == HVD_BIND_NONE)
		res->cpus = req->allowed;
	else if (res->socket >= 0)
		bind_to_socket(req, order, res->socket, res);
	else
		bind_without_socket(req, res);
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
