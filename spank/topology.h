/* topology.h - the hwloc wrapper of the hvd plugin: loads this machine's
 * topology (or an hwloc XML file) with PCI devices kept, and fills a
 * struct placement_topo: packages with their cores and NUMA nodes, NVIDIA
 * GPUs in PCI bus order with the package above each. Also maps the GPU ids
 * Slurm hands out (device minor numbers) to those GPUs.
 * What it does not do: decide placement (placement.c) or bind anything.
 */
#ifndef HVD_SPANK_TOPOLOGY_H
#define HVD_SPANK_TOPOLOGY_H

#include <stddef.h>

#include "placement.h"

/* xml_path NULL: discover this machine. 0, or -1 with a one-line message
 * (also when built without hwloc). Free with topology_free. */
int topology_load(const char *xml_path, struct placement_topo *topo, char *err, size_t err_len);
void topology_free(struct placement_topo *topo);

/* One /proc/driver/nvidia/gpus/BUSID/information text: its "Device Minor"
 * and "Bus Location" (normalised "0000:3b:00.0"). 0, or -1 if either is
 * missing or malformed. */
int topology_parse_nvidia_info(const char *text, int *minor, char busid[PLACEMENT_BUSID_LEN]);

/* Normalises a PCI bus id ("00000000:3B:00.0", "3b:00.0") to
 * "dddd:bb:dd.f". 0 or -1. */
int topology_normalise_busid(const char *in, char out[PLACEMENT_BUSID_LEN]);

struct topology_minor {
	int minor;
	char busid[PLACEMENT_BUSID_LEN];
};

/* Reads DIR/ * /information (DIR normally /proc/driver/nvidia/gpus).
 * Returns the count found (0 when DIR is absent), at most max. */
int topology_read_nvidia_minors(const char *dir, struct topology_minor *out, int max);

/* Slurm GPU ids -> indices into topo->gpus (-1 when not found). With
 * minors (count > 0) an id is a device minor looked up by bus id; without,
 * id N is the N-th NVIDIA GPU of the topology in bus order. */
void topology_map_ids(const struct placement_topo *topo, const struct topology_minor *minors,
		      int minor_count, const int *ids, int count, int *out);

#endif
