/* locality.h - where a task of hvd-check runs, checked against hwloc. */
#ifndef HVD_CHECK_LOCALITY_H
#define HVD_CHECK_LOCALITY_H

#include "record.h"

/* Fills cpus, socket and numa (the GPU's NUMA node; r->gpu must be
 * filled: facts.c) and records the first failure: an affinity that is not
 * HVD_CPUS, a GPU hwloc does not see, a socket that is not HVD_SOCKET,
 * CPUs off the socket nearest the GPU or none on its NUMA node (unless
 * HVD_BIND=none). hwloc discovers the machine, or reads the XML file named
 * by HWLOC_XMLFILE (hwloc's own variable); an unreadable, empty or
 * non-XML one fails instead of hwloc's silent fallback to this machine. */
void check_locality(struct check_record *r);

#endif
