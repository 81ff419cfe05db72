/* launch_plan.c - see launch_plan.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch_plan.h"

/* The GPUs the ranks share: the user's CUDA_VISIBLE_DEVICES entries (a
 * number N is the topology's N-th NVIDIA GPU in bus order; a UUID is a
 * GPU of unknown place), else every GPU of the topology. */
static int granted_gpus(const struct placement_topo *topo, const char *visible,
			char labels[PLACEMENT_MAX_GPUS][64], int gpu[PLACEMENT_MAX_GPUS],
			char *err, size_t len)
{
	int ids[PLACEMENT_MAX_GPUS];
	if (!visible) {
		int n = topo->gpu_count < PLACEMENT_MAX_GPUS ? topo->gpu_count : PLACEMENT_MAX_GPUS;
		for (int i = 0; i < n; i++) {
			snprintf(labels[i], 64, "%d", i);
			gpu[i] = i;
		}
		return n;
	}
	int n = placement_granted(visible, NULL, labels, ids, err, len);
	if (n > 0)
		topology_map_ids(topo, NULL, 0, ids, n, gpu);
	return n;
}

/* Each distinct note of any rank, once. */
static void keep_note(struct launch_plan *plan, const char *note)
{
	for (int k = 0; k < plan->note_count; k++)
		if (!strcmp(plan->notes[k], note))
			return;
	if (note[0] && plan->note_count < 8)
		snprintf(plan->notes[plan->note_count++], PLACEMENT_NOTE_LEN, "%s", note);
}

static void describe_rank(const struct placement_topo *topo, const cpu_set_t *allowed,
			  const char labels[][64], const int *gpu, enum hvd_bind bind,
			  struct launch_rank *r)
{
	int g = r->res.granted_index >= 0 ? gpu[r->res.granted_index] : -1;
	bind_visible_list(labels, &r->res, r->visible, sizeof(r->visible));   /* sized for all */
	snprintf(r->gpu_label, sizeof(r->gpu_label), "%s",
		 r->res.granted_index >= 0 ? labels[r->res.granted_index] : "none");
	snprintf(r->busid, sizeof(r->busid), "%s", g >= 0 ? topo->gpus[g].busid : "");
	placement_format_cpus(bind == HVD_BIND_NONE ? allowed : &r->res.cpus, r->cpus,
			      sizeof(r->cpus));
}

int launch_plan_make(int count, const char *topology_xml, const char *visible,
		     enum hvd_gpu_mode gpu_mode, enum hvd_bind bind, const cpu_set_t *allowed,
		     struct launch_plan *plan, char *err, size_t len)
{
	char labels[PLACEMENT_MAX_GPUS][64];
	int gpu[PLACEMENT_MAX_GPUS];

	memset(plan, 0, sizeof(*plan));
	plan->count = count;
	plan->gpu = gpu_mode;
	plan->bind = bind;
	if (gethostname(plan->host, sizeof(plan->host) - 1) != 0)
		snprintf(plan->host, sizeof(plan->host), "localhost");
	plan->host[strcspn(plan->host, ".")] = '\0';
	struct placement_topo *topo = &plan->topo;
	if (topology_load(topology_xml, topo, err, len))
		return -1;
	plan->gpus = granted_gpus(topo, visible, labels, gpu, err, len);
	if (plan->gpus < 0)
		return -1;
	if (plan->gpus > 0 && count > plan->gpus) {
		snprintf(err, len, "hvdrun: -n: '%d': %d GPU%s here%s%s%s: one rank per GPU (give -n %d "
			 "or fewer)", count, plan->gpus, plan->gpus == 1 ? "" : "s",
			 visible ? " (CUDA_VISIBLE_DEVICES '" : "", visible ? visible : "",
			 visible ? "')" : "", plan->gpus);
		return -1;
	}
	if (!allowed)
		allowed = &topo->machine_cpus;
	plan->ranks = calloc((size_t)count, sizeof(*plan->ranks));
	if (!plan->ranks) {
		snprintf(err, len, "hvdrun: -n: '%d': out of memory", count);
		return -1;
	}
	struct placement_request req = {
		.topo = topo, .granted_count = plan->gpus, .granted_gpu = gpu, .local_count = count,
		.allowed = *allowed, .gpu_mode = gpu_mode, .bind = bind, .host = plan->host,
	};
	for (int i = 0; i < count; i++) {
		req.local_id = i;
		if (placement_compute(&req, &plan->ranks[i].res, err, len))
			return -1;
		keep_note(plan, plan->ranks[i].res.note);
		describe_rank(topo, allowed, (const char (*)[64])labels, gpu, bind, &plan->ranks[i]);
	}
	return 0;
}

void launch_plan_free(struct launch_plan *plan)
{
	free(plan->ranks);
	plan->ranks = NULL;
	topology_free(&plan->topo);
}

void launch_plan_print(const struct launch_plan *plan, FILE *f)
{
	for (int k = 0; k < plan->note_count; k++)
		fprintf(f, "hvdrun: note: %s\n", plan->notes[k]);
	for (int i = 0; i < plan->count; i++) {
		const struct launch_rank *r = &plan->ranks[i];
		fprintf(f, "hvdrun: rank %d on %s: GPU %s (%s), NUMA %d, socket %d, CPUs %s, bind %s, "
			"gpu %s, CUDA_VISIBLE_DEVICES=%s\n", i, plan->host, r->gpu_label,
			r->busid[0] ? r->busid : "bus id unknown", r->res.numa_node, r->res.socket,
			r->cpus, options_bind_name(plan->bind), options_gpu_name(plan->gpu),
			plan->gpus ? r->visible : "(unset)");
	}
}
