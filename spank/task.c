/* task.c - the hvd plugin inside slurmstepd (see task.h): collects what
 * Slurm granted (GPUs, local task id/count, allowed CPUs), asks placement.c,
 * then sets CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, HVD_GPU_BUSID,
 * HVD_CPUS, HVD_NUMA, HVD_SOCKET, HVD_BIND, HVD_PLUGIN_VERSION (this
 * plugin's) and HVD_SLURM_VERSION (the running slurmstepd's), the CPU
 * affinity and the memory policy.
 * Messages go to the task's stderr (the user sees them through srun);
 * node-wide remarks are said once, by local task 0.
 * What it does not do: parse options or decide placement; it never exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind.h"
#include "placement.h"
#include "step_cpus.h"
#include "task.h"
#include "topology.h"

#define NVIDIA_PROC_DIR "/proc/driver/nvidia/gpus"
#define ERR_LEN 512
/* the longest CPU list of a cpu_set_t: at most 512 ranges ("1022,") */
#define TASK_CPULIST_LEN 4096

/* What one task works from. */
struct task_inputs {
	int count;                                /* granted GPUs */
	char labels[PLACEMENT_MAX_GPUS][64];      /* as CUDA_VISIBLE_DEVICES names them */
	int ids[PLACEMENT_MAX_GPUS];              /* Slurm ids (device minors), -1 unknown */
	int gpu[PLACEMENT_MAX_GPUS];              /* index into topo.gpus, -1 unknown */
	uint32_t rank;
	int local_id, local_count;
	char host[256];
	struct placement_topo topo;
};

int task_step_is_special(spank_t sp)
{
	uint32_t step = 0;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return 0;
	return step == SLURM_BATCH_SCRIPT || step == SLURM_EXTERN_CONT ||
	       step == SLURM_INTERACTIVE_STEP;
}

/* name's value into buf, "" when unset; -1 (and "") when it does not fit:
 * a list cut short must never pass for a shorter one. */
static int get_env(spank_t sp, const char *name, char *buf, int len)
{
	spank_err_t rc = spank_getenv(sp, name, buf, len);
	if (rc != ESPANK_SUCCESS)
		buf[0] = 0;
	return rc == ESPANK_NOSPACE ? -1 : 0;
}

void task_capture_step(spank_t sp, struct task_step_gpus *step)
{
	int too_long = get_env(sp, "CUDA_VISIBLE_DEVICES", step->visible, sizeof(step->visible));
	too_long |= get_env(sp, "SLURM_STEP_GPUS", step->step_gpus, sizeof(step->step_gpus));
	step->captured = !too_long;   /* else task_apply reads, and reports, the task's own */
}

static int read_granted(const char *visible, const char *step_gpus, struct task_inputs *in,
			char *err)
{
	in->count = placement_granted(visible, step_gpus, in->labels, in->ids, err, ERR_LEN);
	return in->count < 0 ? -1 : 0;
}

/* Slurm bound GPUs per task already: the task chooses within its own list. */
static int slurm_bound_per_task(const struct task_step_gpus *step, const char *task_visible)
{
	return step->captured && placement_slurm_bound(step->visible, task_visible);
}

static int read_task(spank_t sp, struct task_inputs *in, char *err)
{
	uint32_t local_count = 0;
	if (spank_get_item(sp, S_TASK_ID, &in->local_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &in->rank) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_count) != ESPANK_SUCCESS) {
		snprintf(err, ERR_LEN, "hvd: task_init: 'S_TASK_ID': Slurm did not say which task this is");
		return -1;
	}
	in->local_count = (int)local_count;
	if (gethostname(in->host, sizeof(in->host)) != 0)
		snprintf(in->host, sizeof(in->host), "unknown");
	in->host[sizeof(in->host) - 1] = 0;
	in->host[strcspn(in->host, ".")] = 0;
	return 0;
}

/* Topology and id mapping. A site topology must load; discovery may fail
 * (then every GPU is unknown and CPUs stay as allowed, with a note). */
static int load_topology(const struct hvd_effective *eff, struct task_inputs *in, char *err,
			 char *note, size_t note_len)
{
	struct topology_minor minors[PLACEMENT_MAX_GPUS];
	int minor_count = 0;
	if (topology_load(eff->topology, &in->topo, err, ERR_LEN) != 0) {
		if (eff->topology)
			return -1;
		snprintf(note, note_len, "%s: CPUs left as allowed", err);
		err[0] = 0;
	}
	if (!eff->topology)
		minor_count = topology_read_nvidia_minors(NVIDIA_PROC_DIR, minors, PLACEMENT_MAX_GPUS);
	topology_map_ids(&in->topo, minors, minor_count, in->ids, in->count, in->gpu);
	return 0;
}

/* ------------------------------------------------------------ applying */

static int set_env(spank_t sp, const char *name, const char *value, char *err)
{
	if (spank_setenv(sp, name, value, 1) != ESPANK_SUCCESS) {
		snprintf(err, ERR_LEN, "hvd: spank_setenv: '%s': failed", name);
		return -1;
	}
	return 0;
}

static int set_gpu_env(spank_t sp, const struct task_inputs *in, const struct placement_result *res,
		       char *err)
{
	char visible[PLACEMENT_MAX_GPUS * 65];
	bind_visible_list(in->labels, res, visible, sizeof(visible));   /* sized for every label */
	if (set_env(sp, "CUDA_VISIBLE_DEVICES", visible, err) ||
	    set_env(sp, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", err))
		return -1;
	int g = in->gpu[res->granted_index];
	if (g >= 0)
		return set_env(sp, "HVD_GPU_BUSID", in->topo.gpus[g].busid, err);
	spank_unsetenv(sp, "HVD_GPU_BUSID");   /* unknown here: never a guess */
	return 0;
}

static void print_verbose(const struct task_inputs *in, const struct hvd_effective *eff,
			  const struct placement_result *res, const char *cpus)
{
	char local[32] = "-";
	int g = res->granted_index >= 0 ? in->gpu[res->granted_index] : -1;
	if (res->local_cpus >= 0)
		snprintf(local, sizeof(local), "%d of %d", res->local_cpus, CPU_COUNT(&res->cpus));
	fprintf(stderr, "hvd: rank %u (local %d/%d) on %s: GPU %s (%s), NUMA %d, socket %d, CPUs %s "
		"(%s local to the GPU), bind %s, gpu %s, hvd " HVD_VERSION ", Slurm " HVD_SLURM_VERSION "\n",
		in->rank, in->local_id, in->local_count, in->host,
		res->granted_index >= 0 ? in->labels[res->granted_index] : "none",
		g >= 0 ? in->topo.gpus[g].busid : "bus id unknown", res->numa_node, res->socket, cpus,
		local, options_bind_name(eff->bind), options_gpu_name(eff->gpu));
}

/* What hvd-check reports: this plugin's version and the running Slurm's. */
static int set_version_env(spank_t sp, char *err)
{
	char *slurm = NULL;
	if (spank_get_item(sp, S_SLURM_VERSION, &slurm) != ESPANK_SUCCESS || !slurm)
		slurm = "unknown";
	return set_env(sp, "HVD_PLUGIN_VERSION", HVD_VERSION, err) ||
	       set_env(sp, "HVD_SLURM_VERSION", slurm, err);
}

static int apply(spank_t sp, const struct task_inputs *in, const struct hvd_effective *eff,
		 const struct placement_result *res, char *err)
{
	char cpus[TASK_CPULIST_LEN], socket[16], numa[16];
	if (res->granted_index >= 0 && set_gpu_env(sp, in, res, err) != 0)
		return -1;
	if (res->granted_index < 0)
		spank_unsetenv(sp, "HVD_GPU_BUSID");   /* CPU-only: none inherited either */
	if (bind_apply(eff->bind, res, err, ERR_LEN) != 0)
		return -1;
	cpu_set_t now;
	if (sched_getaffinity(0, sizeof(now), &now) != 0)
		now = res->cpus;
	placement_format_cpus(&now, cpus, sizeof(cpus));
	snprintf(socket, sizeof(socket), "%d", res->socket);
	snprintf(numa, sizeof(numa), "%d", res->numa_node);
	if (set_env(sp, "HVD_CPUS", cpus, err) || set_env(sp, "HVD_SOCKET", socket, err) ||
	    set_env(sp, "HVD_NUMA", numa, err) ||
	    set_env(sp, "HVD_BIND", options_bind_name(eff->bind), err) || set_version_env(sp, err))
		return -1;
	if (eff->verbose)
		print_verbose(in, eff, res, cpus);
	return 0;
}

/* ------------------------------------------------------------- driving */

static void fill_request(const struct task_inputs *in, const struct hvd_effective *eff,
			 const cpu_set_t *allowed, struct placement_request *req)
{
	*req = (struct placement_request){
		.topo = &in->topo, .granted_count = in->count, .granted_gpu = in->gpu,
		.local_id = in->local_id, .local_count = in->local_count, .allowed = *allowed,
		.gpu_mode = eff->gpu, .bind = eff->bind,
		.oversubscribe_warn = eff->oversubscribe_warn, .host = in->host,
	};
}

/* Local task 0 says once what applies to the node: each distinct note of
 * any local task. */
static void say_node_notes(const struct placement_request *mine, const char *topo_note)
{
	char seen[8][PLACEMENT_NOTE_LEN];
	int nseen = 0;
	if (topo_note[0])
		fprintf(stderr, "hvd: note: %s\n", topo_note);
	for (int j = 0; j < mine->local_count && nseen < 8; j++) {
		struct placement_request r = *mine;
		struct placement_result res;
		char err[ERR_LEN];
		r.local_id = j;
		if (placement_compute(&r, &res, err, sizeof(err)) != 0 || !res.note[0])
			continue;
		int dup = 0;
		for (int k = 0; k < nseen; k++)
			dup |= strcmp(seen[k], res.note) == 0;
		if (dup)
			continue;
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", res.note);
		fprintf(stderr, "hvd: note: %s\n", res.note);
	}
}

/* Without a cpuset cgroup, where task/affinity narrowed the task's mask
 * (task/none leaves it the machine's): the CPUs of the step's allocated
 * cores. None (no topology, no list, a list that does not parse) leaves
 * step empty: the task's own mask bounds the binding, with a note. */
static void step_cores(spank_t sp, const struct task_inputs *in, cpu_set_t *step, char *note,
		       size_t note_len)
{
	char *ids = NULL, why[ERR_LEN];
	size_t used = strlen(note);
	if (spank_get_item(sp, S_STEP_ALLOC_CORES, &ids) != ESPANK_SUCCESS || !ids || !ids[0] ||
	    in->topo.socket_count == 0)
		return;
	if (step_cpus_from_cores(ids, &in->topo, step, why, sizeof(why)) != 0)
		snprintf(note + used, note_len - used, "%s%s: bound within the task's own CPUs",
			 used ? "; " : "", why);
}

/* *node_wide stays 1 for failures every local task shares (topology,
 * oversubscription): local task 0 reports those once. Failures of this
 * task alone (binding, environment) set it to 0: the task reports them. */
static int place_and_apply(spank_t sp, struct task_inputs *in, const struct hvd_effective *eff,
			   int alone, char *err, int *node_wide)
{
	char topo_note[ERR_LEN] = "";
	struct placement_request req;
	struct placement_result res;
	cpu_set_t allowed, step;
	CPU_ZERO(&step);
	if (load_topology(eff, in, err, topo_note, sizeof(topo_note)) != 0)
		return -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		snprintf(err, ERR_LEN, "hvd: sched_getaffinity: 'self': %s", strerror(errno));
		*node_wide = 0;
		return -1;
	}
	/* task/affinity bound this task to cores of its own already: bind
	 * within the step's CPUs (task/cgroup's cpuset, else its cores) */
	int no_cgroup = eff->bind != HVD_BIND_NONE ? step_cpus_read("", &step, err, ERR_LEN) : 0;
	if (no_cgroup < 0) {
		*node_wide = 0;
		return -1;
	}
	if (no_cgroup == 1 && !CPU_EQUAL(&allowed, &in->topo.machine_cpus))   /* task/affinity's */
		step_cores(sp, in, &step, topo_note, sizeof(topo_note));
	fill_request(in, eff, CPU_COUNT(&step) ? &step : &allowed, &req);
	if (alone) {
		req.local_id = 0;
		req.local_count = 1;
	}
	if (in->local_id == 0)
		say_node_notes(&req, topo_note);
	if (placement_compute(&req, &res, err, ERR_LEN) != 0)
		return -1;
	*node_wide = 0;
	return apply(sp, in, eff, &res, err);
}

int task_apply(spank_t sp, const struct hvd_site *site, const struct hvd_request *request,
	       const struct task_step_gpus *step)
{
	static struct task_inputs in;   /* large; task_init runs once per process */
	static char visible[TASK_LIST_LEN], step_gpus[TASK_LIST_LEN];
	char err[ERR_LEN] = "";
	struct hvd_effective eff;
	int node_wide = 1;
	int too_long = get_env(sp, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible));
	too_long |= get_env(sp, "SLURM_STEP_GPUS", step_gpus, sizeof(step_gpus));
	options_resolve(site, request, visible[0] != 0 || too_long, &eff);
	if (!eff.active)
		return 0;
	memset(&in, 0, sizeof(in));
	int alone = slurm_bound_per_task(step, visible);
	int rc = read_task(sp, &in, err);
	if (rc == 0 && too_long) {
		snprintf(err, ERR_LEN, "hvd: environment: 'CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS': "
			 "longer than %d characters (hvd handles %d GPUs)", TASK_LIST_LEN - 1,
			 PLACEMENT_MAX_GPUS);
		rc = -1;
	}
	if (rc == 0 && !alone && step->captured && step->visible[0])
		rc = read_granted(step->visible, step->step_gpus, &in, err);
	else if (rc == 0)
		rc = read_granted(visible, step_gpus, &in, err);
	if (rc == 0)
		rc = place_and_apply(sp, &in, &eff, alone, err, &node_wide);
	if (rc != 0 && err[0] && (!node_wide || in.local_id == 0))
		fprintf(stderr, "%s\n", err);
	topology_free(&in.topo);
	return rc;
}
