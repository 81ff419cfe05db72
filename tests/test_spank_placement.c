/* test_spank_placement.c - the plugin's pure placement (spank/placement.c)
 * and hwloc wrapper (spank/topology.c) against the XML topologies of
 * tests/topo: C4140-like (2x20 cores, 4 GPUs), DGX-1-like (2x20x2, 8 GPUs),
 * CPU-only 2 sockets, GPUs under a 2-package Machine, this 2-CPU machine,
 * and a real one-socket VM (tests/topo/real; every real machine is placed
 * by test_spank_real_topo.c). Every mode, oversubscription, non-contiguous and reordered
 * granted lists, restricted affinity masks, unknown GPUs.
 * What it does not do: run Slurm (test_spank_slurm.c does).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "placement.h"
#include "step_cpus.h"
#include "topology.h"

/* ------------------------------------------------------------- helpers */

static int load(const char *name, struct placement_topo *topo)
{
	char path[4096], err[512];
	snprintf(path, sizeof(path), "%s/tests/topo/%s", test_src_dir(), name);
	if (topology_load(path, topo, err, sizeof(err)) != 0) {
		if (strstr(err, "built without hwloc"))
			return 1;
		test_fail_at(__FILE__, __LINE__, "load %s: %s", name, err);
		return -1;
	}
	return 0;
}

#define LOAD(name, topo) do { int r_ = load(name, topo); \
	if (r_ > 0) { SKIP("built without hwloc"); } \
	if (r_ < 0) { return; } } while (0)

static cpu_set_t cpus_of(const char *list)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	char copy[512];
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
		int a, b;
		if (sscanf(tok, "%d-%d", &a, &b) != 2)
			b = a = atoi(tok);
		for (int i = a; i <= b; i++)
			CPU_SET(i, &set);
	}
	return set;
}

static const char *fmt(const cpu_set_t *set)
{
	static char buf[4][512];
	static int next;
	char *b = buf[next++ % 4];
	placement_format_cpus(set, b, 512);
	return b;
}

/* A request: granted GPU ids (as Slurm's device minors, no /proc map),
 * local task id/count, allowed CPUs. */
struct setup {
	struct placement_topo topo;
	int ids[PLACEMENT_MAX_GPUS], gpu[PLACEMENT_MAX_GPUS];
	struct placement_request req;
};

static void make_request(struct setup *s, const char *granted, int local_id, int local_count,
			 const char *allowed, enum hvd_gpu_mode gpu, enum hvd_bind bind)
{
	int n = placement_parse_ids(granted, s->ids, PLACEMENT_MAX_GPUS);
	CHECK(n >= 0);
	topology_map_ids(&s->topo, NULL, 0, s->ids, n, s->gpu);
	s->req = (struct placement_request){
		.topo = &s->topo, .granted_count = n, .granted_gpu = s->gpu,
		.local_id = local_id, .local_count = local_count, .allowed = cpus_of(allowed),
		.gpu_mode = gpu, .bind = bind, .host = "node7",
	};
}

/* Runs placement; returns 0 and fills *res, or -1 with err. */
static int place(struct setup *s, int local_id, struct placement_result *res, char *err)
{
	s->req.local_id = local_id;
	return placement_compute(&s->req, res, err, 512);
}

static const char *order_str(const struct placement_result *res)
{
	static char buf[256];
	buf[0] = 0;
	for (int i = 0; i < res->order_count; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d", i ? "," : "",
			 res->order[i]);
	return buf;
}

/* ---------------------------------------------------------- topologies */

static void test_c4140_topology_has_two_sockets_four_gpus(void)
{
	struct placement_topo t;
	LOAD("c4140.xml", &t);
	CHECK_INT(t.socket_count, 2);
	CHECK_INT(t.gpu_count, 4);   /* the InfiniBand NIC is not a GPU */
	CHECK_STR(fmt(&t.sockets[0].cpus), "0-19");
	CHECK_STR(fmt(&t.sockets[1].cpus), "20-39");
	CHECK_INT(t.sockets[1].core_count, 20);
	CHECK_INT(t.sockets[1].numa_count, 1);
	CHECK_INT(t.sockets[1].numa[0], 1);
	const char *bus[] = { "0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0" };
	const int sock[] = { 0, 0, 1, 1 };
	for (int i = 0; i < 4; i++) {
		CHECK_STR(t.gpus[i].busid, bus[i]);
		CHECK_INT(t.gpus[i].socket, sock[i]);
	}
	CHECK_STR(fmt(&t.machine_cpus), "0-39");
	topology_free(&t);
}

static void test_dgx1_cores_hold_their_hyperthreads(void)
{
	struct placement_topo t;
	LOAD("dgx1.xml", &t);
	CHECK_INT(t.gpu_count, 8);
	CHECK_INT(t.sockets[0].core_count, 20);
	CHECK_STR(fmt(&t.sockets[0].cores[0]), "0,40");
	CHECK_STR(fmt(&t.sockets[0].cpus), "0-19,40-59");
	CHECK_STR(fmt(&t.sockets[1].cpus), "20-39,60-79");
	for (int i = 0; i < 8; i++)
		CHECK_INT(t.gpus[i].socket, i / 4);
	topology_free(&t);
}

static void test_gpus_under_machine_have_no_socket(void)
{
	struct placement_topo t;
	LOAD("gpus-under-machine.xml", &t);
	CHECK_INT(t.gpu_count, 2);
	CHECK_INT(t.gpus[0].socket, -1);
	CHECK_STR(fmt(&t.gpus[0].near_cpus), "0-7");
	topology_free(&t);
}

static void test_cpu_only_and_one_socket_topologies(void)
{
	struct placement_topo t;
	LOAD("cpu-only.xml", &t);
	CHECK_INT(t.socket_count, 2);
	CHECK_INT(t.gpu_count, 0);
	topology_free(&t);
	/* a real one-socket VM: hwloc hangs its GPUs off Machine, whose CPUs
	 * are the one package's: that package is theirs */
	LOAD("real/gce-n1-1s-8xv100.xml", &t);
	CHECK_INT(t.socket_count, 1);
	CHECK_INT(t.gpu_count, 8);
	for (int i = 0; i < 8; i++)
		CHECK(t.gpus[i].socket == 0 && t.gpus[i].numa == 0);
	topology_free(&t);
	LOAD("two-cpu-4gpu.xml", &t);
	CHECK_STR(fmt(&t.sockets[1].cpus), "1");
	CHECK_INT(t.gpu_count, 4);
	topology_free(&t);
}

static void test_missing_or_broken_xml_is_an_error(void)
{
	struct placement_topo t;
	char err[512], path[4200];
	if (topology_load("/nonexistent/topo.xml", &t, err, sizeof(err)) == 0) {
		topology_free(&t);
		CHECK_MSG(0, "loaded a missing file");
		return;
	}
	if (strstr(err, "built without hwloc"))
		SKIP("built without hwloc");
	CHECK_CONTAINS(err, "hvd: topology: '/nonexistent/topo.xml': ");
	snprintf(path, sizeof(path), "%s/bad.xml", test_tmpdir());
	const char *broken = "<topology version=\"2.0\"><object";
	CHECK(test_write_file(path, broken, strlen(broken)) == 0);
	CHECK(topology_load(path, &t, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "bad.xml");
}

/* ----------------------------------------------------------- placement */

static void test_c4140_socket_first_gives_each_task_its_gpu_first(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 4, "0-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	const char *orders[] = { "0,1,2,3", "1,0,2,3", "2,0,1,3", "3,0,1,2" };
	const char *cpus[] = { "0-19", "0-19", "20-39", "20-39" };
	for (int i = 0; i < 4; i++) {
		CHECK_INT(place(&s, i, &r, err), 0);
		CHECK_INT(r.granted_index, i);
		CHECK_STR(order_str(&r), orders[i]);
		CHECK_STR(fmt(&r.cpus), cpus[i]);
		CHECK_INT(r.socket, i / 2);
		CHECK_INT(r.numa_count, 1);
		CHECK_INT(r.numa[0], i / 2);
		CHECK_STR(r.note, "");
	}
	topology_free(&s.topo);
}

static void test_only_mode_shows_one_gpu(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("dgx1.xml", &s.topo);
	make_request(&s, "0,1,2,3,4,5,6,7", 0, 8, "0-79", HVD_GPU_ONLY, HVD_BIND_SOCKET);
	for (int i = 0; i < 8; i++) {
		CHECK_INT(place(&s, i, &r, err), 0);
		CHECK_INT(r.order_count, 1);
		CHECK_INT(r.order[0], i);
		CHECK_STR(fmt(&r.cpus), i < 4 ? "0-19,40-59" : "20-39,60-79");
	}
	topology_free(&s.topo);
}

static void test_core_mode_splits_a_socket_disjointly(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 4, "0-39", HVD_GPU_FIRST, HVD_BIND_CORE);
	const char *cpus[] = { "0-9", "10-19", "20-29", "30-39" };
	for (int i = 0; i < 4; i++) {
		CHECK_INT(place(&s, i, &r, err), 0);
		CHECK_STR(fmt(&r.cpus), cpus[i]);
	}
	topology_free(&s.topo);
	/* DGX-1: 4 tasks per socket, 5 cores each with their hyperthreads */
	LOAD("dgx1.xml", &s.topo);
	make_request(&s, "0,1,2,3,4,5,6,7", 0, 8, "0-79", HVD_GPU_FIRST, HVD_BIND_CORE);
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "0-4,40-44");
	CHECK_INT(place(&s, 7, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "35-39,75-79");
	topology_free(&s.topo);
}

static void test_core_mode_with_fewer_cores_than_tasks_shares_and_says_so(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("two-cpu-4gpu.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 4, "0-1", HVD_GPU_FIRST, HVD_BIND_CORE);
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "0");
	CHECK_CONTAINS(r.note, "fewer allowed cores than tasks near their GPUs: tasks share cores");
	CHECK_INT(place(&s, 2, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "1");
	topology_free(&s.topo);
	/* one socket (real VM), 16 cores, 8 GPUs, 8 tasks: 2 cores each */
	LOAD("real/gce-n1-1s-8xv100.xml", &s.topo);
	make_request(&s, "0,1,2,3,4,5,6,7", 0, 8, "0-15", HVD_GPU_FIRST, HVD_BIND_CORE);
	CHECK_INT(place(&s, 3, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "6-7");
	CHECK_INT(r.socket, 0);
	CHECK_INT(r.numa_node, 0);
	CHECK_STR(r.note, "");
	topology_free(&s.topo);
}

static void test_bind_none_leaves_cpus_but_reports_socket(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 4, "0-39", HVD_GPU_FIRST, HVD_BIND_NONE);
	CHECK_INT(place(&s, 3, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "0-39");
	CHECK_INT(r.socket, 1);
	CHECK_INT(r.granted_index, 3);
	topology_free(&s.topo);
}

static void test_non_contiguous_granted_gpus_fill_socket_by_socket(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "1,3", 0, 2, "0-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_INT(r.granted_index, 0);
	CHECK_STR(fmt(&r.cpus), "0-19");
	CHECK_STR(order_str(&r), "0,1");
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_INT(r.granted_index, 1);
	CHECK_STR(order_str(&r), "1,0");
	CHECK_STR(fmt(&r.cpus), "20-39");
	/* granted out of bus order: tasks still fill socket 0 first */
	make_request(&s, "3,2,1,0", 0, 4, "0-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_INT(r.granted_index, 3);
	CHECK_STR(order_str(&r), "3,0,1,2");
	CHECK_INT(place(&s, 2, &r, err), 0);
	CHECK_INT(r.granted_index, 1);
	CHECK_STR(fmt(&r.cpus), "20-39");
	/* two tasks, four GPUs: both on socket 0 (socket by socket) */
	make_request(&s, "0,1,2,3", 0, 2, "0-39", HVD_GPU_FIRST, HVD_BIND_CORE);
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_INT(r.granted_index, 1);
	CHECK_STR(fmt(&r.cpus), "10-19");
	topology_free(&s.topo);
}

static void test_oversubscription_is_an_error_or_a_warning(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 5, "0-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 0, &r, err), -1);
	CHECK_STR(err, "hvd: oversubscribed: '5 tasks, 4 GPUs on node7': use --ntasks-per-node=4 "
		  "(sites can allow it with oversubscribe=warn)");
	s.req.oversubscribe_warn = 1;
	CHECK_INT(place(&s, 4, &r, err), 0);
	CHECK_INT(r.granted_index, 0);
	CHECK_CONTAINS(r.note, "oversubscribed: '5 tasks, 4 GPUs on node7': tasks share GPUs");
	/* core mode counts the sharing task on socket 0: 3 tasks there */
	s.req.bind = HVD_BIND_CORE;
	CHECK_INT(place(&s, 4, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "13-19");
	topology_free(&s.topo);
}

static void test_restricted_allowed_mask_is_intersected(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 4, "0-4,20-24", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "0-4");
	CHECK_INT(place(&s, 3, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "20-24");
	s.req.bind = HVD_BIND_CORE;
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "0-1");
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "2-4");
	topology_free(&s.topo);
}

static void test_allowed_mask_outside_the_socket_falls_back_with_a_note(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1,2,3", 0, 4, "20-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "20-39");
	CHECK_CONTAINS(r.note, "socket 0 CPUs '0-19' are outside the allowed CPUs '20-39': left as allowed");
	topology_free(&s.topo);
}

static void test_gpus_near_two_packages_split_the_machine(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("gpus-under-machine.xml", &s.topo);
	make_request(&s, "0,1", 0, 2, "0-5", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_INT(r.granted_index, 1);
	CHECK_INT(r.socket, -1);
	CHECK_STR(fmt(&r.cpus), "3-5");
	CHECK_CONTAINS(r.note, "GPU 0000:84:00.0 has no single package near it in the topology: "
		       "the machine's CPUs split among the tasks");
	/* allowed CPUs beyond the machine's (a site XML smaller than the
	 * machine): the allowed ones of the topology split */
	s.req.allowed = cpus_of("4-11");
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "6-7");
	/* none of them allowed: left as allowed, and said */
	s.req.allowed = cpus_of("8-11");
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "8-11");
	CHECK_CONTAINS(r.note, "GPU 0000:");
	topology_free(&s.topo);
}

static void test_gpu_missing_from_topology_gets_the_cores_left(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "2,9", 0, 2, "0-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 0, &r, err), 0);
	CHECK_INT(r.granted_index, 0);
	CHECK_STR(fmt(&r.cpus), "20-39");
	CHECK_INT(place(&s, 1, &r, err), 0);
	CHECK_INT(r.granted_index, 1);
	CHECK_STR(fmt(&r.cpus), "0-19");   /* the cores GPU 2's task left */
	CHECK_CONTAINS(r.note, "granted GPU #1 is not in the topology: CPUs split among the tasks");
	topology_free(&s.topo);
}

static void test_cpu_only_steps_go_round_robin_over_sockets(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("cpu-only.xml", &s.topo);
	make_request(&s, "", 0, 4, "0-7", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	const char *cpus[] = { "0-3", "4-7", "0-3", "4-7" };
	for (int i = 0; i < 4; i++) {
		CHECK_INT(place(&s, i, &r, err), 0);
		CHECK_INT(r.granted_index, -1);
		CHECK_INT(r.order_count, 0);
		CHECK_INT(r.socket, i % 2);
		CHECK_STR(fmt(&r.cpus), cpus[i]);
	}
	s.req.bind = HVD_BIND_CORE;
	CHECK_INT(place(&s, 2, &r, err), 0);
	CHECK_STR(fmt(&r.cpus), "2-3");
	topology_free(&s.topo);
}

static void test_bad_requests_are_refused(void)
{
	struct setup s;
	struct placement_result r;
	char err[512];
	LOAD("c4140.xml", &s.topo);
	make_request(&s, "0,1", 0, 2, "0-39", HVD_GPU_FIRST, HVD_BIND_SOCKET);
	CHECK_INT(place(&s, 2, &r, err), -1);
	CHECK_STR(err, "hvd: local task: '2 of 2': out of range");
	s.req.local_count = 0;
	CHECK_INT(place(&s, 0, &r, err), -1);
	topology_free(&s.topo);
}

/* --------------------------------------------------------------- lists */

static void test_cpu_lists_and_id_lists(void)
{
	cpu_set_t set = cpus_of("0-3,8,10-11,1023");
	char small[4];
	CHECK_STR(fmt(&set), "0-3,8,10-11,1023");
	CPU_ZERO(&set);
	CHECK_STR(fmt(&set), "");
	set = cpus_of("0-99");
	CHECK_INT(placement_format_cpus(&set, small, sizeof(small)), -1);
	int ids[8];
	CHECK_INT(placement_parse_ids("0,1,2,3", ids, 8), 4);
	CHECK_INT(ids[3], 3);
	CHECK_INT(placement_parse_ids("12", ids, 8), 1);
	CHECK_INT(ids[0], 12);
	CHECK_INT(placement_parse_ids("", ids, 8), 0);
	const char *bad[] = { "1,,2", "1,", ",1", "a", "-1", "1 ", "0x1", "GPU-12ab", "99999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(placement_parse_ids(bad[i], ids, 8) == -1, "'%s' accepted", bad[i]);
	CHECK_INT(placement_parse_ids("0,1,2", ids, 2), -1);
	char entries[4][64];
	CHECK_INT(placement_split_list("GPU-aa,GPU-bb", entries, 4), 2);
	CHECK_STR(entries[1], "GPU-bb");
	CHECK_INT(placement_split_list("a,,b", entries, 4), -1);
}

/* ConstrainDevices: the task sees cgroup-local indices, SLURM_STEP_GPUS
 * holds the device minors; the ids that map to the topology are the
 * minors, the labels stay what the task sees. */
static void test_granted_gpus_pair_local_indices_with_slurm_ids(void)
{
	char labels[PLACEMENT_MAX_GPUS][64], err[512];
	int ids[PLACEMENT_MAX_GPUS];
	CHECK_INT(placement_granted("0,1", "2,3", labels, ids, err, sizeof(err)), 2);
	CHECK_STR(labels[1], "1");
	CHECK_INT(ids[0], 2);
	CHECK_INT(ids[1], 3);
	/* UUIDs paired with the step's minors */
	CHECK_INT(placement_granted("GPU-aa,GPU-bb", "5,1", labels, ids, err, sizeof(err)), 2);
	CHECK_STR(labels[0], "GPU-aa");
	CHECK(ids[0] == 5 && ids[1] == 1);
	/* no pairing (count differs or absent): ids from the labels, -1 unknown */
	CHECK_INT(placement_granted("3,1", "0", labels, ids, err, sizeof(err)), 2);
	CHECK(ids[0] == 3 && ids[1] == 1);
	CHECK_INT(placement_granted("GPU-aa,2", "", labels, ids, err, sizeof(err)), 2);
	CHECK(ids[0] == -1 && ids[1] == 2);
	CHECK_INT(placement_granted("", "", labels, ids, err, sizeof(err)), 0);
	CHECK_INT(placement_granted("0,,1", "0,1", labels, ids, err, sizeof(err)), -1);
	CHECK_STR(err, "hvd: CUDA_VISIBLE_DEVICES: '0,,1': not a list of at most 64 GPUs");
	/* the cgroup-local ids map to the right GPUs of the topology */
	struct placement_topo t;
	int gpu[2];
	LOAD("c4140.xml", &t);
	CHECK_INT(placement_granted("0,1", "2,3", labels, ids, err, sizeof(err)), 2);
	topology_map_ids(&t, NULL, 0, ids, 2, gpu);
	CHECK_STR(t.gpus[gpu[0]].busid, "0000:86:00.0");
	CHECK_INT(t.gpus[gpu[1]].socket, 1);
	topology_free(&t);
}

static void test_slurm_per_task_binding_is_recognised(void)
{
	CHECK_INT(placement_slurm_bound("0,1,2,3", "2"), 1);         /* --gpus-per-task=1 */
	CHECK_INT(placement_slurm_bound("0,1,2,3", "3,1"), 1);
	CHECK_INT(placement_slurm_bound("0,1,2,3", "0,1,2,3"), 0);   /* the whole step */
	CHECK_INT(placement_slurm_bound("0,1,2,3", ""), 0);          /* --gpu-bind=none */
	CHECK_INT(placement_slurm_bound("0,1", "0,5"), 0);           /* not the step's */
	CHECK_INT(placement_slurm_bound("0,1", "0,,1"), 0);
}

static void test_nvidia_proc_information_is_parsed(void)
{
	const char *text =
		"Model: \t\t Tesla V100-SXM2-16GB\n"
		"IRQ:   \t\t 62\n"
		"GPU UUID: \t GPU-9f0e3a0c-0000-0000-0000-000000000000\n"
		"Bus Type: \t PCIe\n"
		"Bus Location: \t 0000:AF:00.0\n"
		"Device Minor: \t 0\n"
		"GPU Excluded:\t No\n";
	int minor = -1;
	char bus[PLACEMENT_BUSID_LEN];
	CHECK_INT(topology_parse_nvidia_info(text, &minor, bus), 0);
	CHECK_INT(minor, 0);
	CHECK_STR(bus, "0000:af:00.0");
	CHECK_INT(topology_parse_nvidia_info("Bus Location: 0000:af:00.0\n", &minor, bus), -1);
	CHECK_INT(topology_parse_nvidia_info("Bus Location: zz\nDevice Minor: 1\n", &minor, bus), -1);
	CHECK_INT(topology_parse_nvidia_info("Bus Location: 0000:af:00.0\nDevice Minor: x\n",
					     &minor, bus), -1);
	CHECK_INT(topology_normalise_busid("00000000:3B:00.0", bus), 0);
	CHECK_STR(bus, "0000:3b:00.0");
	CHECK_INT(topology_normalise_busid("3b:00.0", bus), 0);
	CHECK_STR(bus, "0000:3b:00.0");
	CHECK_INT(topology_normalise_busid("3b:00.0x", bus), -1);
	CHECK_INT(topology_normalise_busid("0000:3b:40.0", bus), -1);
	/* a directory laid out like /proc/driver/nvidia/gpus */
	char dir[4200], path[4300];
	snprintf(dir, sizeof(dir), "%s/gpus/0000:af:00.0", test_tmpdir());
	snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
	CHECK(system(path) == 0);
	snprintf(path, sizeof(path), "%s/information", dir);
	CHECK(test_write_file(path, text, strlen(text)) == 0);
	struct topology_minor minors[4];
	snprintf(dir, sizeof(dir), "%s/gpus", test_tmpdir());
	CHECK_INT(topology_read_nvidia_minors(dir, minors, 4), 1);
	CHECK_STR(minors[0].busid, "0000:af:00.0");
	CHECK_INT(topology_read_nvidia_minors("/nonexistent", minors, 4), 0);
}

static void test_device_minors_map_by_bus_id(void)
{
	struct placement_topo t;
	LOAD("c4140.xml", &t);
	/* minors numbered against bus order: minor 0 is the GPU at af:00.0 */
	struct topology_minor minors[4] = {
		{ 0, "0000:af:00.0" }, { 1, "0000:86:00.0" }, { 2, "0000:5e:00.0" }, { 3, "0000:3b:00.0" },
	};
	int ids[3] = { 0, 3, 7 }, out[3];
	topology_map_ids(&t, minors, 4, ids, 3, out);
	CHECK_INT(out[0], 3);
	CHECK_INT(out[1], 0);
	CHECK_INT(out[2], -1);
	topology_map_ids(&t, NULL, 0, ids, 3, out);   /* no /proc: bus order */
	CHECK_INT(out[0], 0);
	CHECK_INT(out[1], 3);
	CHECK_INT(out[2], -1);
	topology_free(&t);
}

/* CPU lists as the kernel writes them, and bad ones. */
static void test_step_cpu_lists_parse(void)
{
	cpu_set_t s;
	char text[64];
	CHECK_INT(step_cpus_parse("0-3,8,10-11\n", &s), 0);
	placement_format_cpus(&s, text, sizeof(text));
	CHECK_STR(text, "0-3,8,10-11");
	const char *bad[] = { "", "\n", "3-1", "a", "1,,2", "0-", "-1", "1 2", "99999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(step_cpus_parse(bad[i], &s) == -1, "'%s' accepted", bad[i]);
}

/* The step's CPUs come from Slurm's cpuset cgroup, v1 or v2; a cgroup
 * that is not Slurm's says nothing; a broken file is an error. */
static void test_step_cpus_come_from_slurms_cgroup(void)
{
	cpu_set_t s;
	char err[256] = "", text[64];
	const char *root = test_tmpdir();
	test_put("proc/self/cgroup", "12:memory:/slurm_n1/uid_0/job_7/step_0/task_1\n"
		 "4:cpuset:/slurm_n1/uid_0/job_7/step_0\n1:name=systemd:/user.slice\n");
	test_put("sys/fs/cgroup/cpuset/slurm_n1/uid_0/job_7/step_0/cpuset.cpus", "0-1,4\n");
	CHECK_INT(step_cpus_read(root, &s, err, sizeof(err)), 0);
	placement_format_cpus(&s, text, sizeof(text));
	CHECK_STR(text, "0-1,4");
	test_put("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n");
	test_put("sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/user/task_0/cpuset.cpus.effective",
		 "2-3\n");
	CHECK_INT(step_cpus_read(root, &s, err, sizeof(err)), 0);
	placement_format_cpus(&s, text, sizeof(text));
	CHECK_STR(text, "2-3");
	test_put("proc/self/cgroup", "4:cpuset:/\n0::/user.slice/session-1.scope\n");
	CHECK_INT(step_cpus_read(root, &s, err, sizeof(err)), 1);
	test_put("proc/self/cgroup", "4:cpuset:/slurm_n1/uid_0/job_7/step_0\n");
	test_put("sys/fs/cgroup/cpuset/slurm_n1/uid_0/job_7/step_0/cpuset.cpus", "\n");
	CHECK_INT(step_cpus_read(root, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "/cpuset.cpus': not a CPU list");
}

/* task/affinity alone: Slurm's core ids of the step -> the topology's
 * cores in logical order -> their PUs (hyperthreads included). */
static void test_step_core_ids_map_to_pus(void)
{
	struct placement_topo t;
	cpu_set_t s;
	char err[512];
	LOAD("dgx1.xml", &t);   /* 2 x 20 cores x 2 PUs: core 0 = PUs 0,40 */
	CHECK_INT(step_cpus_from_cores("0-1,20", &t, &s, err, sizeof(err)), 0);
	CHECK_STR(fmt(&s), "0-1,20,40-41,60");
	CHECK_INT(step_cpus_from_cores("39", &t, &s, err, sizeof(err)), 0);
	CHECK_STR(fmt(&s), "39,79");
	/* slurm.conf with more cores than the machine: wrapped like task/affinity */
	CHECK_INT(step_cpus_from_cores("40,41", &t, &s, err, sizeof(err)), 0);
	CHECK_STR(fmt(&s), "0-1,40-41");
	CHECK_INT(step_cpus_from_cores("0-x", &t, &s, err, sizeof(err)), -1);
	CHECK_STR(err, "hvd: S_STEP_ALLOC_CORES: '0-x': not a core list");
	topology_free(&t);
}

const struct test_case spank_placement_tests[] = {
	{ "step_cpu_lists_parse", test_step_cpu_lists_parse },
	{ "step_cpus_come_from_slurms_cgroup", test_step_cpus_come_from_slurms_cgroup },
	{ "step_core_ids_map_to_pus", test_step_core_ids_map_to_pus },
	{ "c4140_topology_has_two_sockets_four_gpus", test_c4140_topology_has_two_sockets_four_gpus },
	{ "dgx1_cores_hold_their_hyperthreads", test_dgx1_cores_hold_their_hyperthreads },
	{ "gpus_under_machine_have_no_socket", test_gpus_under_machine_have_no_socket },
	{ "cpu_only_and_one_socket_topologies", test_cpu_only_and_one_socket_topologies },
	{ "missing_or_broken_xml_is_an_error", test_missing_or_broken_xml_is_an_error },
	{ "c4140_socket_first_gives_each_task_its_gpu_first",
	  test_c4140_socket_first_gives_each_task_its_gpu_first },
	{ "only_mode_shows_one_gpu", test_only_mode_shows_one_gpu },
	{ "core_mode_splits_a_socket_disjointly", test_core_mode_splits_a_socket_disjointly },
	{ "core_mode_with_fewer_cores_than_tasks_shares_and_says_so",
	  test_core_mode_with_fewer_cores_than_tasks_shares_and_says_so },
	{ "bind_none_leaves_cpus_but_reports_socket", test_bind_none_leaves_cpus_but_reports_socket },
	{ "non_contiguous_granted_gpus_fill_socket_by_socket",
	  test_non_contiguous_granted_gpus_fill_socket_by_socket },
	{ "oversubscription_is_an_error_or_a_warning", test_oversubscription_is_an_error_or_a_warning },
	{ "restricted_allowed_mask_is_intersected", test_restricted_allowed_mask_is_intersected },
	{ "allowed_mask_outside_the_socket_falls_back_with_a_note",
	  test_allowed_mask_outside_the_socket_falls_back_with_a_note },
	{ "gpus_near_two_packages_split_the_machine", test_gpus_near_two_packages_split_the_machine },
	{ "gpu_missing_from_topology_gets_the_cores_left", test_gpu_missing_from_topology_gets_the_cores_left },
	{ "cpu_only_steps_go_round_robin_over_sockets", test_cpu_only_steps_go_round_robin_over_sockets },
	{ "bad_requests_are_refused", test_bad_requests_are_refused },
	{ "cpu_lists_and_id_lists", test_cpu_lists_and_id_lists },
	{ "granted_gpus_pair_local_indices_with_slurm_ids",
	  test_granted_gpus_pair_local_indices_with_slurm_ids },
	{ "slurm_per_task_binding_is_recognised", test_slurm_per_task_binding_is_recognised },
	{ "nvidia_proc_information_is_parsed", test_nvidia_proc_information_is_parsed },
	{ "device_minors_map_by_bus_id", test_device_minors_map_by_bus_id },
	{ 0 }
};
