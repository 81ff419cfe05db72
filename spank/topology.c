/* topology.c - hwloc -> struct placement_topo, and Slurm GPU ids -> GPUs
 * (see topology.h). hwloc drops PCI devices unless the I/O filter keeps
 * them, and a topology loaded from XML is never bound through hwloc (it
 * only yields CPU sets; task.c calls sched_setaffinity itself).
 * What it does not do: decide placement or touch the process.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#include "topology.h"

#define NVIDIA_VENDOR 0x10de

void topology_free(struct placement_topo *topo)
{
	for (int i = 0; topo->sockets && i < topo->socket_count; i++)
		free(topo->sockets[i].cores);
	free(topo->sockets);
	free(topo->numas);
	free(topo->gpus);
	memset(topo, 0, sizeof(*topo));
}

/* ------------------------------------------------------------- bus ids */

/* n hex digits at *p (exactly), advancing *p. */
static int hex_field(const char **p, int n, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
			: (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + (unsigned)d;
	}
	*p += n;
	*out = v;
	return 0;
}

/* [dddd: or dddddddd:]bb:dd.f, nothing else. */
int topology_normalise_busid(const char *in, char out[PLACEMENT_BUSID_LEN])
{
	unsigned domain = 0, bus, dev, func;
	const char *p = in;
	size_t len = strlen(in);
	if (len == 12 || len == 16) {
		if (hex_field(&p, (int)len - 8, &domain) != 0 || *p++ != ':')
			return -1;
	} else if (len != 7) {
		return -1;
	}
	if (hex_field(&p, 2, &bus) != 0 || *p++ != ':' || hex_field(&p, 2, &dev) != 0 ||
	    *p++ != '.' || hex_field(&p, 1, &func) != 0 || *p != 0)
		return -1;
	if (domain > 0xffff || dev > 0x1f || func > 7)
		return -1;
	snprintf(out, PLACEMENT_BUSID_LEN, "%04x:%02x:%02x.%x", domain, bus, dev, func);
	return 0;
}

/* "Key:   value" lines; value without leading blanks or trailing newline. */
static int info_value(const char *text, const char *key, char *val, size_t len)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		const char *v = line + klen + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strcspn(v, "\r\n");
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n == 0 || n >= len)
			return -1;
		memcpy(val, v, n);
		val[n] = 0;
		return 0;
	}
	return -1;
}

int topology_parse_nvidia_info(const char *text, int *minor, char busid[PLACEMENT_BUSID_LEN])
{
	char bus[64], min[32];
	if (info_value(text, "Bus Location", bus, sizeof(bus)) != 0 ||
	    info_value(text, "Device Minor", min, sizeof(min)) != 0)
		return -1;
	if (topology_normalise_busid(bus, busid) != 0)
		return -1;
	int ids[1];
	if (placement_parse_ids(min, ids, 1) != 1)
		return -1;
	*minor = ids[0];
	return 0;
}

int topology_read_nvidia_minors(const char *dir, struct topology_minor *out, int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char path[4096], text[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/information", dir, e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t got = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[got] = 0;
		if (topology_parse_nvidia_info(text, &out[n].minor, out[n].busid) == 0)
			n++;
	}
	closedir(d);
	return n;
}

void topology_map_ids(const struct placement_topo *topo, const struct topology_minor *minors,
		      int minor_count, const int *ids, int count, int *out)
{
	for (int i = 0; i < count; i++) {
		out[i] = -1;
		if (minor_count == 0) {
			if (ids[i] >= 0 && ids[i] < topo->gpu_count)
				out[i] = ids[i];
			continue;
		}
		for (int m = 0; m < minor_count; m++) {
			if (minors[m].minor != ids[i])
				continue;
			for (int g = 0; g < topo->gpu_count; g++)
				if (strcmp(topo->gpus[g].busid, minors[m].busid) == 0)
					out[i] = g;
		}
	}
}

#ifdef HAVE_HWLOC
/* ---------------------------------------------------------------- hwloc */

static int to_cpu_set(hwloc_const_bitmap_t bits, cpu_set_t *set, char *err, size_t err_len)
{
	int i;
	CPU_ZERO(set);
	if (!bits)
		return 0;
	int last = hwloc_bitmap_last(bits);
	if (last >= CPU_SETSIZE) {
		snprintf(err, err_len, "hvd: topology: 'PU %d': beyond the %d CPUs hvd handles",
			 last, CPU_SETSIZE);
		return -1;
	}
	hwloc_bitmap_foreach_begin(i, bits)
		CPU_SET(i, set);
	hwloc_bitmap_foreach_end();
	return 0;
}

static int fill_socket(hwloc_topology_t t, hwloc_obj_t pkg, struct placement_socket *s,
		       char *err, size_t err_len)
{
	if (to_cpu_set(pkg->cpuset, &s->cpus, err, err_len) != 0)
		return -1;
	hwloc_obj_type_t unit = HWLOC_OBJ_CORE;
	int n = hwloc_get_nbobjs_inside_cpuset_by_type(t, pkg->cpuset, unit);
	if (n <= 0) {   /* no Core level: every PU is a core */
		unit = HWLOC_OBJ_PU;
		n = hwloc_get_nbobjs_inside_cpuset_by_type(t, pkg->cpuset, unit);
	}
	s->cores = calloc(n > 0 ? (size_t)n : 1, sizeof(cpu_set_t));
	if (!s->cores) {
		snprintf(err, err_len, "hvd: topology: '%d cores': out of memory", n);
		return -1;
	}
	for (int c = 0; c < n; c++) {
		hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(t, pkg->cpuset, unit, (unsigned)c);
		if (core && to_cpu_set(core->cpuset, &s->cores[s->core_count], err, err_len) != 0)
			return -1;
		s->core_count += core != NULL;
	}
	hwloc_obj_t node = NULL;
	while ((node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, node)))
		if (!hwloc_bitmap_iszero(node->cpuset) && hwloc_bitmap_isincluded(node->cpuset, pkg->cpuset) &&
		    s->numa_count < PLACEMENT_MAX_NUMA)
			s->numa[s->numa_count++] = (int)node->os_index;
	return 0;
}

/* The NUMA nodes with CPUs; CPU-less ones (GPU memory on POWER9, nodes a
 * restricted capture left without CPUs) are no place for a task. */
static int fill_numas(hwloc_topology_t t, struct placement_topo *topo, char *err, size_t err_len)
{
	int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	topo->numas = calloc(n > 0 ? (size_t)n : 1, sizeof(*topo->numas));
	if (!topo->numas) {
		snprintf(err, err_len, "hvd: topology: '%d NUMA nodes': out of memory", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
		if (!node || hwloc_bitmap_iszero(node->cpuset))
			continue;
		struct placement_numa *u = &topo->numas[topo->numa_count];
		if (to_cpu_set(node->cpuset, &u->cpus, err, err_len) != 0)
			return -1;
		u->os_index = (int)node->os_index;
		u->socket = -1;
		for (int s = 0; s < topo->socket_count; s++)
			if (hwloc_bitmap_isincluded(node->cpuset,
			    hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, (unsigned)s)->cpuset))
				u->socket = s;
		topo->numa_count++;
	}
	return 0;
}

static int is_nvidia_gpu(hwloc_obj_t obj)
{
	return obj->attr->pcidev.vendor_id == NVIDIA_VENDOR &&
	       (obj->attr->pcidev.class_id == 0x0302 || obj->attr->pcidev.class_id == 0x0300);
}

static int compare_busids(const void *a, const void *b)
{
	return strcmp(((const struct placement_gpu *)a)->busid, ((const struct placement_gpu *)b)->busid);
}

/* The one package and the one NUMA node near the GPU's CPUs: one-socket
 * machines hang GPUs off Machine (whose CPUs are the package's), NPS4/SNC
 * machines off a Group, a die or a cache inside the NUMA node. A GPU near
 * CPUs of two packages (VMs hang GPUs off Machine) or of none (a
 * restricted capture) has no single one: -1. */
static void locate_gpu(const struct placement_topo *topo, struct placement_gpu *g)
{
	cpu_set_t both;
	int hits = 0;
	g->socket = g->numa = -1;
	for (int s = 0; s < topo->socket_count; s++) {
		CPU_AND(&both, &topo->sockets[s].cpus, &g->near_cpus);
		if (CPU_COUNT(&both) > 0 && hits++ == 0)
			g->socket = s;
	}
	if (hits != 1)
		g->socket = -1;
	hits = 0;
	for (int u = 0; u < topo->numa_count; u++) {
		const cpu_set_t *cpus = &topo->numas[u].cpus;
		CPU_AND(&both, cpus, &g->near_cpus);
		int nested = CPU_EQUAL(&both, cpus) || CPU_EQUAL(&both, &g->near_cpus);
		if (CPU_COUNT(&both) > 0 && nested && hits++ == 0)
			g->numa = u;
	}
	if (hits != 1)
		g->numa = -1;
}

static int fill_gpu(hwloc_topology_t t, const struct placement_topo *topo, hwloc_obj_t dev,
		    struct placement_gpu *g, char *err, size_t err_len)
{
	const struct hwloc_pcidev_attr_s *a = &dev->attr->pcidev;
	snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%x", (unsigned)a->domain & 0xffff,
		 a->bus, a->dev, a->func);
	hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(t, dev);
	if (to_cpu_set(near ? near->cpuset : NULL, &g->near_cpus, err, err_len) != 0)
		return -1;
	locate_gpu(topo, g);
	return 0;
}

static int fill_gpus(hwloc_topology_t t, struct placement_topo *topo, char *err, size_t err_len)
{
	hwloc_obj_t dev = NULL;
	int n = 0;
	while ((dev = hwloc_get_next_pcidev(t, dev)))
		n += is_nvidia_gpu(dev);
	if (n > PLACEMENT_MAX_GPUS) {
		snprintf(err, err_len, "hvd: topology: '%d GPUs': more than %d", n, PLACEMENT_MAX_GPUS);
		return -1;
	}
	topo->gpus = calloc(n > 0 ? (size_t)n : 1, sizeof(*topo->gpus));
	if (!topo->gpus) {
		snprintf(err, err_len, "hvd: topology: '%d GPUs': out of memory", n);
		return -1;
	}
	while ((dev = hwloc_get_next_pcidev(t, dev))) {
		if (!is_nvidia_gpu(dev))
			continue;
		if (fill_gpu(t, topo, dev, &topo->gpus[topo->gpu_count++], err, err_len) != 0)
			return -1;
	}
	qsort(topo->gpus, (size_t)topo->gpu_count, sizeof(*topo->gpus), compare_busids);
	return 0;
}

static int fill_topo(hwloc_topology_t t, struct placement_topo *topo, char *err, size_t err_len)
{
	if (to_cpu_set(hwloc_get_root_obj(t)->cpuset, &topo->machine_cpus, err, err_len) != 0)
		return -1;
	int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
	topo->sockets = calloc(n > 0 ? (size_t)n : 1, sizeof(*topo->sockets));
	if (!topo->sockets) {
		snprintf(err, err_len, "hvd: topology: '%d packages': out of memory", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		topo->socket_count++;
		if (fill_socket(t, hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, (unsigned)i),
				&topo->sockets[i], err, err_len) != 0)
			return -1;
	}
	if (fill_numas(t, topo, err, err_len) != 0)
		return -1;
	return fill_gpus(t, topo, err, err_len);
}

/* Placement needs CPUs, NUMA nodes and PCI devices. hwloc's components
 * that probe more can block or start GPU drivers inside slurmstepd: GL
 * opens X displays :0-:9 and waits forever on anything listening on ports
 * 6000-6009 (TensorBoard's 6006), OpenCL and the GPU vendors' ones load
 * drivers. A name this hwloc does not have is refused with EINVAL: then
 * there is nothing to keep out. */
static void keep_out_probing_components(hwloc_topology_t t)
{
	static const char *const names[] = { "gl", "opencl", "cuda", "nvml", "rsmi", "levelzero" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, names[i]);
}

#ifndef HWLOC_VERSION
#define HWLOC_VERSION "2.x"
#endif

/* Why an XML file did not load: hwloc 2.x refuses 3.0 files with only
 * EINVAL, so name both versions when the file says 3.x. */
static void xml_error(const char *path, int error, char *err, size_t err_len)
{
	char head[512] = "";
	FILE *f = fopen(path, "r");
	if (f) {
		head[fread(head, 1, sizeof(head) - 1, f)] = 0;
		fclose(f);
	}
	const char *v = strstr(head, "<topology version=\"");
	if (v && atoi(v + 19) > HWLOC_API_VERSION >> 16)
		snprintf(err, err_len, "hvd: topology: '%s': hwloc XML version %.3s, this hwloc "
			 HWLOC_VERSION " reads up to 2.x: export it with an hwloc 2.x lstopo",
			 path, v + 19);
	else
		snprintf(err, err_len, "hvd: topology: '%s': hwloc could not load it: %s", path,
			 strerror(error));
}

int topology_load(const char *xml_path, struct placement_topo *topo, char *err, size_t err_len)
{
	hwloc_topology_t t;
	int rc = -1;
	memset(topo, 0, sizeof(*topo));
	if (hwloc_topology_init(&t) != 0) {
		snprintf(err, err_len, "hvd: topology: 'hwloc_topology_init': %s", strerror(errno));
		return -1;
	}
	keep_out_probing_components(t);
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (xml_path && hwloc_topology_set_xml(t, xml_path) != 0) {
		snprintf(err, err_len, "hvd: topology: '%s': cannot use as hwloc XML: %s",
			 xml_path, strerror(errno));
		goto out;
	}
	if (hwloc_topology_load(t) != 0) {
		if (xml_path)
			xml_error(xml_path, errno, err, err_len);
		else
			snprintf(err, err_len, "hvd: topology: 'this machine': hwloc could not load it: %s",
				 strerror(errno));
		goto out;
	}
	rc = fill_topo(t, topo, err, err_len);
	if (rc != 0)
		topology_free(topo);
out:
	hwloc_topology_destroy(t);
	return rc;
}

#else /* !HAVE_HWLOC */

int topology_load(const char *xml_path, struct placement_topo *topo, char *err, size_t err_len)
{
	memset(topo, 0, sizeof(*topo));
	snprintf(err, err_len, "hvd: topology: '%s': built without hwloc (install libhwloc-dev)",
		 xml_path ? xml_path : "this machine");
	return -1;
}

#endif
