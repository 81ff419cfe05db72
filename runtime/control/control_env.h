/* control_env.h - the control plane's part of a launch without PMIx
 * (control_env.c): connect every rank at start-up through HVD_COORDINATOR,
 * the bootstrap's exchange over those connections, and hvd_abort_job
 * without a launcher.
 * What it does not do: anything under srun (PMIx does it there).
 */
#ifndef HVD_CONTROL_ENV_H
#define HVD_CONTROL_ENV_H

#include <stddef.h>

#include "core/auth.h"
#include "engine/runtime.h"

/* After control_listen: every rank connected and authenticated (rank 0:
 * all of them within HVD_TIMEOUT_S; a worker: rank 0, resolving
 * HVD_COORDINATOR on each attempt); sets rt->boot.exchange. */
int control_env_rendezvous(struct runtime *rt, char *err, size_t errlen);
/* The IPv4 address other ranks reach this one at. 0 or -1. */
int control_env_address(struct runtime *rt, char *ip, size_t len);
/* The job secret's key (for the TCP backend's own connections). */
const struct auth_key *control_env_key(struct runtime *rt);
/* Fails the job here if it has not failed yet, waits (at most 2 s) until
 * the control thread has told rank 0 / every worker, and returns HVD_OK,
 * or an error naming the ranks it could not reach. Never exits. */
int control_env_abort(struct runtime *rt, int status, char *err, size_t errlen);

#endif
