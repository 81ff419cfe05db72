/* test_spank_real_topo.c - group "spank-topo-real": the plugin's placement
 * on every real GPU server of tests/topo/real, checked against what hwloc
 * itself says of the same XML (the GPU's non-I/O ancestor, the packages
 * covering it, hwloc_get_local_numanode_objs), never against the
 * plugin's own reading. Allocations: the first k GPUs by bus id (k = 1, 2,
 * 4, all) and one GPU per NUMA node; one task per GPU; modes numa, socket,
 * core. Checks: own GPU first, every GPU owned once; socket within the
 * GPU's package; numa within its NUMA node; core within its NUMA node when
 * that has a core for each task homed there, else within its package, and
 * whole cores; no CPU shared where the package has a core per task; the
 * memory node is the GPU's, never CPU-less (GPU memory).
 * HVD_MACHINES_MD=FILE writes the table of spank/MACHINES.md.
 * What it does not do: run Slurm or bind anything.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "placement.h"
#include "topology.h"

#ifdef HVD_HAVE_HWLOC
#include <hwloc.h>

#define MAX_FILES 64

/* What hwloc says of one GPU: its package and NUMA node (NULL: not one). */
struct expect {
	hwloc_obj_t pkg, numa;
};

static cpu_set_t to_set(hwloc_const_bitmap_t b)
{
	cpu_set_t s;
	int i;
	CPU_ZERO(&s);
	hwloc_bitmap_foreach_begin(i, b)
		if (i < CPU_SETSIZE)
			CPU_SET(i, &s);
	hwloc_bitmap_foreach_end();
	return s;
}

static int subset(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t both;
	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}

static struct expect hwloc_expect(hwloc_topology_t t, const char *busid)
{
	struct expect e = { NULL, NULL };
	unsigned dom, bus, dev, fn;
	if (sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return e;
	hwloc_obj_t pci = hwloc_get_pcidev_by_busid(t, dom, bus, dev, fn);
	hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(t, pci) : NULL;
	if (!near || hwloc_bitmap_iszero(near->cpuset))
		return e;
	hwloc_obj_t p = hwloc_get_next_obj_covering_cpuset_by_type(t, near->cpuset, HWLOC_OBJ_PACKAGE, NULL);
	if (p && !hwloc_get_next_obj_covering_cpuset_by_type(t, near->cpuset, HWLOC_OBJ_PACKAGE, p))
		e.pkg = p;
	struct hwloc_location loc = { .type = HWLOC_LOCATION_TYPE_CPUSET, .location.cpuset = near->cpuset };
	hwloc_obj_t nodes[64];
	unsigned n = 64, with_cpus = 0;
	if (hwloc_get_local_numanode_objs(t, &loc, &n, nodes, HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY |
					  HWLOC_LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY) != 0)
		return e;
	for (unsigned i = 0; i < n && i < 64; i++)
		if (!hwloc_bitmap_iszero(nodes[i]->cpuset) && with_cpus++ == 0)
			e.numa = nodes[i];
	if (with_cpus != 1)
		e.numa = NULL;
	return e;
}

static int cores_in(hwloc_topology_t t, hwloc_obj_t o)
{
	return hwloc_get_nbobjs_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_CORE);
}

struct machine {
	const char *name;
	hwloc_topology_t ht;
	struct placement_topo topo;
	struct expect ex[PLACEMENT_MAX_GPUS];
};

/* Tasks whose GPU hwloc puts on object o (a NUMA node or a package). */
static int tasks_on(const struct machine *m, const int *gpus, int k, hwloc_obj_t o, int numa)
{
	int n = 0;
	for (int j = 0; j < k; j++)
		n += (numa ? m->ex[gpus[j]].numa : m->ex[gpus[j]].pkg) == o;
	return n;
}

static void check_task(struct machine *m, const int *gpus, int k, enum hvd_bind bind, int j,
		       const struct placement_result *r, cpu_set_t *seen, int *overlap)
{
	const char *mode = bind == HVD_BIND_NUMA ? "numa" : bind == HVD_BIND_CORE ? "core" : "socket";
	struct expect e = m->ex[gpus[r->granted_index]];
	cpu_set_t pkg = e.pkg ? to_set(e.pkg->cpuset) : r->cpus;
	cpu_set_t node = e.numa ? to_set(e.numa->cpuset) : pkg;
	CHECK_MSG(r->order_count == k && r->order[0] == r->granted_index, "%s %s k=%d task %d: own GPU "
		  "not first", m->name, mode, k, j);
	CHECK_MSG(CPU_COUNT(&r->cpus) > 0, "%s %s k=%d task %d: no CPUs", m->name, mode, k, j);
	CHECK_MSG(subset(&r->cpus, &pkg), "%s %s k=%d task %d: CPUs outside the GPU's package",
		  m->name, mode, k, j);
	int in_node = bind == HVD_BIND_NUMA ||
		      (bind == HVD_BIND_CORE && e.numa && cores_in(m->ht, e.numa) >= tasks_on(m, gpus, k, e.numa, 1));
	CHECK_MSG(!in_node || subset(&r->cpus, &node), "%s %s k=%d task %d: CPUs outside the GPU's "
		  "NUMA node", m->name, mode, k, j);
	if (e.numa)
		CHECK_MSG(r->numa_node == (int)e.numa->os_index, "%s %s k=%d task %d: memory on NUMA %d, "
			  "GPU on %u", m->name, mode, k, j, r->numa_node, e.numa->os_index);
	hwloc_obj_t mem = r->numa_node >= 0 ? hwloc_get_numanode_obj_by_os_index(m->ht, (unsigned)r->numa_node) : NULL;
	CHECK_MSG(r->numa_node < 0 || (mem && !hwloc_bitmap_iszero(mem->cpuset)), "%s: memory on CPU-less "
		  "NUMA %d", m->name, r->numa_node);
	if (bind != HVD_BIND_CORE)
		return;
	hwloc_obj_t core = NULL;   /* whole cores */
	while ((core = hwloc_get_next_obj_by_type(m->ht, HWLOC_OBJ_CORE, core))) {
		cpu_set_t c = to_set(core->cpuset), both;
		CPU_AND(&both, &c, &r->cpus);
		CHECK_MSG(CPU_COUNT(&both) == 0 || CPU_EQUAL(&both, &c), "%s core k=%d task %d: part of "
			  "a core", m->name, k, j);
	}
	CPU_AND(&pkg, seen, &r->cpus);
	*overlap |= CPU_COUNT(&pkg) > 0;
	CPU_OR(seen, seen, &r->cpus);
}

/* One task per GPU of gpus[0..k) (indices into the plugin's bus-ordered
 * list, which is the bus order hwloc reports too). */
static void check_allocation(struct machine *m, const int *gpus, int k, enum hvd_bind bind)
{
	struct placement_request req = {
		.topo = &m->topo, .granted_count = k, .granted_gpu = gpus, .local_count = k,
		.allowed = m->topo.machine_cpus, .gpu_mode = HVD_GPU_FIRST, .bind = bind, .host = "real",
	};
	cpu_set_t seen;
	int owner[PLACEMENT_MAX_GPUS] = { 0 }, overlap = 0, room = 1;
	CPU_ZERO(&seen);
	for (int j = 0; j < k; j++) {
		struct placement_result r;
		char err[512];
		req.local_id = j;
		if (placement_compute(&req, &r, err, sizeof(err)) != 0) {
			CHECK_MSG(0, "%s k=%d task %d: %s", m->name, k, j, err);
			return;
		}
		owner[r.granted_index]++;
		check_task(m, gpus, k, bind, j, &r, &seen, &overlap);
		struct expect e = m->ex[gpus[r.granted_index]];
		room &= e.pkg && cores_in(m->ht, e.pkg) >= tasks_on(m, gpus, k, e.pkg, 0);
	}
	for (int i = 0; i < k; i++)
		CHECK_MSG(owner[i] == 1, "%s k=%d: GPU %d owned by %d tasks", m->name, k, i, owner[i]);
	CHECK_MSG(!room || !overlap, "%s core k=%d: tasks share CPUs though each package has a core "
		  "per task", m->name, k);
}

static int load_machine(const char *dir, const char *name, struct machine *m)
{
	char path[4096], err[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	m->name = name;
	if (topology_load(path, &m->topo, err, sizeof(err)) != 0) {
		CHECK_MSG(0, "%s", err);
		return -1;
	}
	if (hwloc_topology_init(&m->ht) != 0 || hwloc_topology_set_xml(m->ht, path) != 0 ||
	    hwloc_topology_set_io_types_filter(m->ht, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0 ||
	    hwloc_topology_load(m->ht) != 0) {
		CHECK_MSG(0, "hwloc cannot load %s", path);
		topology_free(&m->topo);
		return -1;
	}
	for (int g = 0; g < m->topo.gpu_count; g++)
		m->ex[g] = hwloc_expect(m->ht, m->topo.gpus[g].busid);
	return 0;
}

static int list_files(const char *dir, char names[MAX_FILES][128])
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) && n < MAX_FILES) {
		size_t len = strlen(e->d_name);
		if (len > 4 && len < 128 && strcmp(e->d_name + len - 4, ".xml") == 0)
			snprintf(names[n++], 128, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
	return n;
}

/* One GPU per NUMA node hwloc names (the first by bus id on each). */
static int one_per_numa(const struct machine *m, int *gpus)
{
	int k = 0;
	for (int g = 0; g < m->topo.gpu_count; g++) {
		int dup = !m->ex[g].numa;
		for (int i = 0; i < k; i++)
			dup |= m->ex[gpus[i]].numa == m->ex[g].numa;
		if (!dup)
			gpus[k++] = g;
	}
	return k;
}

static void table_row(FILE *f, struct machine *m)
{
	int all[PLACEMENT_MAX_GPUS];
	char cpus[256];
	for (int g = 0; g < m->topo.gpu_count; g++)
		all[g] = g;
	int packages = 0;
	for (int s = 0; s < m->topo.socket_count; s++)
		packages += CPU_COUNT(&m->topo.sockets[s].cpus) > 0;
	fprintf(f, "| %s | %d | %d | %d |", m->name, packages, m->topo.numa_count, m->topo.gpu_count);
	for (int b = 0; b < 3; b++) {
		enum hvd_bind bind = b == 0 ? HVD_BIND_NUMA : b == 1 ? HVD_BIND_SOCKET : HVD_BIND_CORE;
		struct placement_request req = {
			.topo = &m->topo, .granted_count = m->topo.gpu_count, .granted_gpu = all,
			.local_count = m->topo.gpu_count, .allowed = m->topo.machine_cpus,
			.gpu_mode = HVD_GPU_FIRST, .bind = bind, .host = "real",
		};
		struct placement_result r;
		char err[512];
		if (placement_compute(&req, &r, err, sizeof(err)) != 0)
			snprintf(cpus, sizeof(cpus), "error");
		else if (placement_format_cpus(&r.cpus, cpus, sizeof(cpus)) != 0)
			snprintf(cpus, sizeof(cpus), "(long)");
		if (b == 0)
			fprintf(f, " %s / N%d / P%d |", m->topo.gpus[0].busid, r.numa_node, r.socket);
		fprintf(f, " %s (%d local) |", cpus, r.local_cpus);
	}
	fprintf(f, "\n");
}

static void test_every_real_machine_places_by_locality(void)
{
	char dir[4096], names[MAX_FILES][128];
	snprintf(dir, sizeof(dir), "%s/tests/topo/real", test_src_dir());
	int n = list_files(dir, names);
	CHECK_MSG(n >= 20, "%d real topologies in %s", n, dir);
	const char *md = getenv("HVD_MACHINES_MD");
	FILE *table = md ? fopen(md, "w") : NULL;
	for (int i = 0; i < n; i++) {
		static struct machine m;
		memset(&m, 0, sizeof(m));
		if (load_machine(dir, names[i], &m) != 0)
			continue;
		int gpus[PLACEMENT_MAX_GPUS], per_numa[PLACEMENT_MAX_GPUS];
		for (int g = 0; g < m.topo.gpu_count; g++)
			gpus[g] = g;
		int k_numa = one_per_numa(&m, per_numa);
		const int ks[] = { 1, 2, 4, m.topo.gpu_count };
		for (int b = 0; b < 3; b++) {
			enum hvd_bind bind = b == 0 ? HVD_BIND_NUMA : b == 1 ? HVD_BIND_SOCKET : HVD_BIND_CORE;
			for (int x = 0; x < 4; x++)
				if (ks[x] > 0 && ks[x] <= m.topo.gpu_count)
					check_allocation(&m, gpus, ks[x], bind);
			if (k_numa > 0)
				check_allocation(&m, per_numa, k_numa, bind);
		}
		if (table && m.topo.gpu_count > 0)
			table_row(table, &m);
		hwloc_topology_destroy(m.ht);
		topology_free(&m.topo);
	}
	if (table)
		fclose(table);
}

/* The shapes the issue named: NPS4 (4 H200 on NUMA 1, 2, 6, 7), one
 * socket, DGX-2H, POWER9 with GPU-memory NUMA nodes; as hwloc says. */
static void test_named_shapes_get_their_gpus_numa_node(void)
{
	char dir[4096];
	static struct machine m;
	snprintf(dir, sizeof(dir), "%s/tests/topo/real", test_src_dir());
	const struct { const char *file; int gpus, numa0; } shapes[] = {
		{ "prrte-turin9555-4gpu-nvml.xml", 4, 1 }, { "gce-n1-1s-8xv100.xml", 8, 0 },
		{ "dgx2h-2s-16xv100.xml", 16, 0 }, { "sierra2-power9-4xv100.xml", 4, 0 },
	};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		memset(&m, 0, sizeof(m));
		if (load_machine(dir, shapes[i].file, &m) != 0)
			continue;
		CHECK_INT(m.topo.gpu_count, shapes[i].gpus);
		CHECK_MSG(m.ex[0].numa && (int)m.ex[0].numa->os_index == shapes[i].numa0, "%s", shapes[i].file);
		CHECK_MSG(m.topo.gpus[0].socket == 0, "%s: GPU 0 on socket %d", shapes[i].file,
			  m.topo.gpus[0].socket);
		hwloc_topology_destroy(m.ht);
		topology_free(&m.topo);
	}
}

/* The NPS4 case: the step cgroup holds exactly the 4 GPUs' NUMA
 * nodes (hwloc's cpusets). Every task gets its own GPU's node, all of
 * its CPUs local (not swapped with a neighbour's). */
static void test_nps4_step_cgroup_is_matched_by_locality(void)
{
	char dir[4096];
	static struct machine m;
	snprintf(dir, sizeof(dir), "%s/tests/topo/real", test_src_dir());
	memset(&m, 0, sizeof(m));
	if (load_machine(dir, "prrte-turin9555-4gpu-nvml.xml", &m) != 0)
		return;
	int gpus[4] = { 0, 1, 2, 3 };
	struct placement_request req = {
		.topo = &m.topo, .granted_count = 4, .granted_gpu = gpus, .local_count = 4,
		.gpu_mode = HVD_GPU_FIRST, .bind = HVD_BIND_CORE, .host = "real",
	};
	CPU_ZERO(&req.allowed);
	for (int g = 0; g < 4; g++) {
		cpu_set_t node = to_set(m.ex[g].numa->cpuset);
		CPU_OR(&req.allowed, &req.allowed, &node);
	}
	for (int b = 0; b < 2; b++) {
		req.bind = b ? HVD_BIND_NUMA : HVD_BIND_CORE;
		for (int j = 0; j < 4; j++) {
			struct placement_result r;
			char err[512];
			req.local_id = j;
			CHECK_INT(placement_compute(&req, &r, err, sizeof(err)), 0);
			cpu_set_t node = to_set(m.ex[gpus[r.granted_index]].numa->cpuset);
			CHECK_MSG(CPU_EQUAL(&r.cpus, &node), "task %d: not its GPU's NUMA node", j);
			CHECK_INT(r.local_cpus, 32);
		}
	}
	hwloc_topology_destroy(m.ht);
	topology_free(&m.topo);
}

/* Captured inside a 16-core cgroup: the GPUs' own CPUs are not in the
 * file. Tasks split the 16 allowed cores, disjointly, and are told. */
static void test_restricted_capture_splits_what_is_allowed(void)
{
	char dir[4096];
	static struct machine m;
	snprintf(dir, sizeof(dir), "%s/tests/topo/real", test_src_dir());
	memset(&m, 0, sizeof(m));
	if (load_machine(dir, "openpmix-h200-1s-cgroup16c-nvml.xml", &m) != 0)
		return;
	int gpus[4] = { 0, 1, 2, 3 };
	struct placement_request req = {
		.topo = &m.topo, .granted_count = 4, .granted_gpu = gpus, .local_count = 4,
		.allowed = m.topo.machine_cpus, .gpu_mode = HVD_GPU_FIRST, .bind = HVD_BIND_NUMA,
		.host = "real",
	};
	cpu_set_t seen;
	CPU_ZERO(&seen);
	for (int j = 0; j < 4; j++) {
		struct placement_result r;
		char err[512];
		req.local_id = j;
		CHECK_INT(placement_compute(&req, &r, err, sizeof(err)), 0);
		CHECK_INT(CPU_COUNT(&r.cpus), 4);
		CHECK_CONTAINS(r.note, "has no single package near it in the topology");
		cpu_set_t both;
		CPU_AND(&both, &seen, &r.cpus);
		CHECK_INT(CPU_COUNT(&both), 0);
		CPU_OR(&seen, &seen, &r.cpus);
	}
	CHECK_INT(CPU_COUNT(&seen), 16);
	hwloc_topology_destroy(m.ht);
	topology_free(&m.topo);
}

/* A CPU-only step on the restricted capture (2 packages, one emptied by
 * the cgroup): both tasks on the package with CPUs. */
static void test_cpu_only_tasks_skip_empty_packages(void)
{
	char dir[4096];
	static struct machine m;
	snprintf(dir, sizeof(dir), "%s/tests/topo/real", test_src_dir());
	memset(&m, 0, sizeof(m));
	if (load_machine(dir, "openpmix-h200-1s-cgroup16c-nvml.xml", &m) != 0)
		return;
	CHECK_INT(m.topo.socket_count, 2);   /* as hwloc keeps them */
	struct placement_request req = {
		.topo = &m.topo, .local_count = 2, .allowed = m.topo.machine_cpus,
		.gpu_mode = HVD_GPU_FIRST, .bind = HVD_BIND_SOCKET, .host = "real",
	};
	for (int j = 0; j < 2; j++) {
		struct placement_result r;
		char err[512];
		req.local_id = j;
		CHECK_INT(placement_compute(&req, &r, err, sizeof(err)), 0);
		CHECK_MSG(CPU_EQUAL(&r.cpus, &m.topo.machine_cpus), "task %d: socket %d", j, r.socket);
		CHECK_STR(r.note, "");
	}
	hwloc_topology_destroy(m.ht);
	topology_free(&m.topo);
}

/* hwloc 2.x refuses a 3.0 file with only EINVAL: one line naming both. */
static void test_hwloc3_xml_names_both_versions(void)
{
	char src[4096], path[4200], err[512];
	struct placement_topo t;
	snprintf(src, sizeof(src), "%s/tests/topo/real/gce-n1-1s-8xv100.xml", test_src_dir());
	FILE *f = fopen(src, "r");
	static char text[1 << 20];
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = 0;
	char *v = strstr(text, "<topology version=\"2.0\"");
	CHECK(v != NULL);
	if (!v)
		return;
	v[19] = '3';
	snprintf(path, sizeof(path), "%s/v3.xml", test_tmpdir());
	CHECK(test_write_file(path, text, n) == 0);
	CHECK_INT(topology_load(path, &t, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "v3.xml': hwloc XML version 3.0, this hwloc " HWLOC_VERSION " reads up to 2.x");
	CHECK(strchr(err, '\n') == NULL);
}

#else
static void test_every_real_machine_places_by_locality(void) { SKIP("built without hwloc"); }
static void test_named_shapes_get_their_gpus_numa_node(void) { SKIP("built without hwloc"); }
static void test_nps4_step_cgroup_is_matched_by_locality(void) { SKIP("built without hwloc"); }
static void test_restricted_capture_splits_what_is_allowed(void) { SKIP("built without hwloc"); }
static void test_hwloc3_xml_names_both_versions(void) { SKIP("built without hwloc"); }
static void test_cpu_only_tasks_skip_empty_packages(void) { SKIP("built without hwloc"); }
#endif

const struct test_case spank_topo_real_tests[] = {
	{ "every_real_machine_places_by_locality", test_every_real_machine_places_by_locality },
	{ "named_shapes_get_their_gpus_numa_node", test_named_shapes_get_their_gpus_numa_node },
	{ "nps4_step_cgroup_is_matched_by_locality", test_nps4_step_cgroup_is_matched_by_locality },
	{ "restricted_capture_splits_what_is_allowed", test_restricted_capture_splits_what_is_allowed },
	{ "hwloc3_xml_names_both_versions", test_hwloc3_xml_names_both_versions },
	{ "cpu_only_tasks_skip_empty_packages", test_cpu_only_tasks_skip_empty_packages },
	{ 0 }
};
