/* bootstrap_env.h - who am I without a PMIx server: a Kubernetes Indexed
 * Job (JOB_COMPLETION_INDEX) or contrib/hvdrun (HVD_RANK), the world's
 * size from HVD_SIZE, and the two things such a launch must name because
 * nobody publishes them: rank 0's address (HVD_COORDINATOR) and the job
 * secret (HVD_SECRET_FILE). Local rank, local size and node ids come from
 * the host names every rank reports in the host exchange, never from a
 * guess. Pure: environ-style arrays and host tables in, unit-tested.
 * What it does not do: sockets or the exchange itself (control_env.c),
 * read the secret (auth.c).
 */
#ifndef HVD_BOOTSTRAP_ENV_H
#define HVD_BOOTSTRAP_ENV_H

#include <stddef.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/hosts.h"

/* Rank from HVD_RANK or JOB_COMPLETION_INDEX (equal when both are set),
 * size from HVD_SIZE (1-65536), rank below size; with more than one rank
 * HVD_COORDINATOR and HVD_SECRET_FILE must be set. Returns 0, or -1 with
 * a message naming the variable. */
int bootstrap_env_parse(char *const *envp, int *rank, int *size, char *err, size_t errlen);

/* From the host names of the host table (b->size rows): each row's
 * local_rank = rows below it with the same host, node_id = order of the
 * host's first appearance; b's local rank and size, node id and count
 * for b->rank. */
void bootstrap_env_places(struct bootstrap *b, struct host_entry *hosts);

#endif
