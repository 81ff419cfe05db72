/* locality.c - the task's placement against hwloc (locality.h): its CPU
 * affinity (sched_getaffinity) must be what the plugin exported in
 * HVD_CPUS and lie inside the package (socket) near its GPU
 * (HVD_GPU_BUSID: hwloc's PCI locality; on one-socket machines hwloc hangs
 * GPUs off Machine, whose one package is theirs), or inside package
 * HVD_SOCKET in a step without GPUs; that package's logical index must be
 * HVD_SOCKET; at least one of its CPUs must lie on the GPU's NUMA node
 * where that node has CPUs.
 * What it does not do: read the plugin's other exports (facts.c) or bind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locality.h"
#include "xmlfile.h"

static hwloc_bitmap_t my_cpus(struct check_record *r)
{
	cpu_set_t set;
	char *text = NULL;
	hwloc_bitmap_t bits = hwloc_bitmap_alloc();
	if (!bits || sched_getaffinity(0, sizeof(set), &set) != 0) {
		check_record_fail(r, "affinity: 'self': %s", strerror(errno));
		return bits;
	}
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			hwloc_bitmap_set(bits, (unsigned)i);
	if (hwloc_bitmap_list_asprintf(&text, bits) >= 0)
		snprintf(r->cpus, sizeof(r->cpus), "%s", text);
	free(text);
	return bits;
}

static void check_hvd_cpus(struct check_record *r, hwloc_const_bitmap_t mine)
{
	const char *exported = getenv("HVD_CPUS");
	hwloc_bitmap_t bits = hwloc_bitmap_alloc();
	if (exported && bits && (hwloc_bitmap_list_sscanf(bits, exported) != 0 ||
				 !hwloc_bitmap_isequal(bits, mine)))
		check_record_fail(r, "affinity: '%s': HVD_CPUS says %s", r->cpus, exported);
	hwloc_bitmap_free(bits);
}

/* CPUs, NUMA nodes and PCI devices are all the check needs; the
 * components that probe more can block (GL: X displays :0-:9, forever on a
 * listener on ports 6000-6009) or start GPU drivers. A name this hwloc
 * lacks is refused (EINVAL): nothing to keep out. */
static void keep_out_probing_components(hwloc_topology_t t)
{
	static const char *const names[] = { "gl", "opencl", "cuda", "nvml", "rsmi", "levelzero" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, names[i]);
}

static int load(struct check_record *r, hwloc_topology_t *t)
{
	if (hwloc_topology_init(t) != 0) {
		check_record_fail(r, "hwloc: 'init': %s", strerror(errno));
		return -1;
	}
	keep_out_probing_components(*t);
	hwloc_topology_set_io_types_filter(*t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	const char *xml = getenv("HWLOC_XMLFILE");
	char why[160];
	int bad = xml && check_xmlfile(xml, why, sizeof(why)) != 0;
	if (xml && !bad && hwloc_topology_set_xml(*t, xml) != 0) {
		snprintf(why, sizeof(why), "hwloc refuses it: %s", strerror(errno));
		bad = 1;
	}
	if (bad) {   /* hwloc would fall back to this machine without a word */
		check_record_fail(r, "hwloc: HWLOC_XMLFILE '%s': %s", xml, why);
		hwloc_topology_destroy(*t);
		return -1;
	}
	if (hwloc_topology_load(*t) != 0) {
		check_record_fail(r, "hwloc: '%s': %s", getenv("HWLOC_XMLFILE") ? getenv("HWLOC_XMLFILE")
				  : "discovery", strerror(errno));
		hwloc_topology_destroy(*t);
		return -1;
	}
	return 0;
}

/* The package above the GPU, else package HVD_SOCKET; NULL when neither. */
static hwloc_obj_t find_package(struct check_record *r, hwloc_topology_t t, int want_socket)
{
	if (strcmp(r->gpu, "-") != 0) {
		hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(t, r->gpu);
		hwloc_obj_t near = dev ? hwloc_get_non_io_ancestor_obj(t, dev) : NULL;
		if (!dev)
			check_record_fail(r, "GPU: '%s': hwloc does not see it (HWLOC_XMLFILE: the "
					  "plugin's topology= file)", r->gpu);
		if (!near || hwloc_bitmap_iszero(near->cpuset))
			return NULL;
		hwloc_obj_t pkg = hwloc_get_next_obj_covering_cpuset_by_type(t, near->cpuset,
									       HWLOC_OBJ_PACKAGE, NULL);
		if (pkg && hwloc_get_next_obj_covering_cpuset_by_type(t, near->cpuset, HWLOC_OBJ_PACKAGE, pkg))
			return NULL;   /* near two packages: none is the GPU's */
		return pkg;
	}
	return want_socket >= 0 ? hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, (unsigned)want_socket)
				: NULL;
}

static void check_package(struct check_record *r, hwloc_obj_t pkg, hwloc_const_bitmap_t mine,
			  int want_socket)
{
	char *text = NULL;
	const char *bind = getenv("HVD_BIND");
	snprintf(r->socket, sizeof(r->socket), "%u", pkg->logical_index);
	if (want_socket != (int)pkg->logical_index)
		check_record_fail(r, "socket: '%s': HVD_SOCKET says %d", r->socket, want_socket);
	if (bind && strcmp(bind, "none") != 0 && !hwloc_bitmap_isincluded(mine, pkg->cpuset)) {
		hwloc_bitmap_list_asprintf(&text, pkg->cpuset);
		check_record_fail(r, "CPUs: '%s': off socket %s (CPUs %s) nearest GPU %s", r->cpus,
				  r->socket, text ? text : "?", r->gpu);
		free(text);
	}
}

/* The one NUMA node with CPUs near the GPU, as hwloc says; NULL: none
 * or several (a GPU hung off a package holding several nodes). */
static hwloc_obj_t gpu_numa(hwloc_topology_t t, const char *busid)
{
	hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(t, busid);
	hwloc_obj_t near = dev ? hwloc_get_non_io_ancestor_obj(t, dev) : NULL;
	if (!near || hwloc_bitmap_iszero(near->cpuset))
		return NULL;
	struct hwloc_location loc = { .type = HWLOC_LOCATION_TYPE_CPUSET, .location.cpuset = near->cpuset };
	hwloc_obj_t nodes[64], found = NULL;
	unsigned n = 64, with_cpus = 0;
	if (hwloc_get_local_numanode_objs(t, &loc, &n, nodes, HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY |
					  HWLOC_LOCAL_NUMANODE_FLAG_SMALLER_LOCALITY) != 0)
		return NULL;
	for (unsigned i = 0; i < n && i < 64; i++)
		if (!hwloc_bitmap_iszero(nodes[i]->cpuset) && with_cpus++ == 0)
			found = nodes[i];
	return with_cpus == 1 ? found : NULL;
}

/* NUMA column: the GPU's node. Bound tasks need a CPU on it (the PCIe
 * link and the pinned buffers live there). */
static void check_numa(struct check_record *r, hwloc_topology_t t, hwloc_const_bitmap_t mine)
{
	const char *bind = getenv("HVD_BIND");
	hwloc_obj_t node = strcmp(r->gpu, "-") != 0 ? gpu_numa(t, r->gpu) : NULL;
	char *text = NULL;
	if (!node)
		return;
	snprintf(r->numa, sizeof(r->numa), "%u", node->os_index);
	if (!bind || strcmp(bind, "none") == 0 || hwloc_bitmap_intersects(mine, node->cpuset))
		return;
	hwloc_bitmap_list_asprintf(&text, node->cpuset);
	check_record_fail(r, "NUMA: '%s': none of the task's CPUs is on NUMA node %u (CPUs %s) of "
			  "GPU %s", r->cpus, node->os_index, text ? text : "?", r->gpu);
	free(text);
}

/* HVD_SOCKET: -1 when unset; a value that is no integer fails the task. */
static int exported_socket(struct check_record *r, const char *sock)
{
	char *end = NULL;
	long v = sock ? strtol(sock, &end, 10) : -1;
	if (sock && (!sock[0] || *end || v < -1 || v > 65535)) {
		check_record_fail(r, "socket: '%s': HVD_SOCKET is not a socket index", sock);
		return -1;
	}
	return (int)v;
}

void check_locality(struct check_record *r)
{
	hwloc_topology_t t;
	const char *sock = getenv("HVD_SOCKET");
	int want_socket = exported_socket(r, sock);
	snprintf(r->socket, sizeof(r->socket), "-");
	snprintf(r->numa, sizeof(r->numa), "-");
	hwloc_bitmap_t mine = my_cpus(r);
	if (!mine)
		return;
	check_hvd_cpus(r, mine);
	if (load(r, &t) == 0) {
		hwloc_obj_t pkg = find_package(r, t, want_socket);
		if (pkg)
			check_package(r, pkg, mine, want_socket);
		else if (strcmp(r->gpu, "-") != 0 || want_socket >= 0)
			check_record_fail(r, "socket: '%s': hwloc shows no single package near it",
					  strcmp(r->gpu, "-") ? r->gpu : sock);
		check_numa(r, t, mine);
		hwloc_topology_destroy(t);
	}
	hwloc_bitmap_free(mine);
}
