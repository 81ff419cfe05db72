/* locality.h - where a task of hvd-check runs, checked against hwloc. */
#ifndef HVD_CHECK_LOCALITY_H
#define HVD_CHECK_LOCALITY_H

#include "record.h"

/* Fills cpus, socket and numa (r->gpu must be filled: facts.c) and records
 * the first failure: an affinity that is not HVD_CPUS, a GPU hwloc does
 * not see, a socket that is not HVD_SOCKET, CPUs off the socket nearest
 * the GPU (unless HVD_BIND=none). hwloc discovers the machine, or reads
 * the XML file named by HWLOC_XMLFILE (hwloc's own variable). */
void check_locality(struct check_record *r);

#endif
