/* bootstrap.h - who am I in this step: rank, size, local rank and size,
 * node id, hostname, and a blob exchange between all ranks (PMIx Put,
 * Commit, Fence with data collection, Get; without PMIx, rank and size
 * from the environment and the exchange over the control plane:
 * bootstrap_env.h, control_env.c). The fence must collect: under
 * Slurm 22.05 a fence without PMIX_COLLECT_DATA only waits for the ranks
 * of the same node (measured on the multi-node test cluster,
 * tests/slurm/multinode.sh). Under `srun --mpi=pmix` (or
 * MpiDefault=pmix) it is a PMIx client; without a PMIx server it is a
 * one-rank world; in a Slurm step of several tasks without PMIx it fails
 * at once with the fix. The decision is made from the environment before
 * PMIx_Init (bootstrap_decide, pure), because a standalone PMIx_Init
 * breaks a later singleton MPI_Init (facts file, section 6).
 * What it does not do: MPI or sockets (comm_mpi.c, control.c).
 */
#ifndef HVD_BOOTSTRAP_H
#define HVD_BOOTSTRAP_H

#include <stddef.h>

/* BOOTSTRAP_ENV: no PMIx server, rank and size from the environment
 * (bootstrap_env.h: Kubernetes Indexed Job, contrib/hvdrun); the blob
 * exchange runs over the control plane (control_env.c sets `exchange`). */
enum bootstrap_mode { BOOTSTRAP_SINGLE = 0, BOOTSTRAP_PMIX, BOOTSTRAP_ENV };

struct bootstrap {
	enum bootstrap_mode mode;
	int rank, size, local_rank, local_size, node_id, node_count;
	char hostname[256];
	void *pmix;            /* pmix_proc_t of this process, PMIx mode only */
	double fence_timeout_s;
	double last_fence_s;   /* seconds the last fence waited (tests: a barrier across nodes) */
	/* BOOTSTRAP_ENV: the allgather of bootstrap_allgather, over the
	 * control plane's start-up connections (NULL until they exist) */
	int (*exchange)(void *ctx, const char *key, const void *mine, size_t len, void *all,
			char *err, size_t errlen);
	void *exchange_ctx;
};

/* From an environ-style array: PMIx when PMIX_NAMESPACE and PMIX_RANK are
 * set; else the environment bootstrap when HVD_RANK, HVD_SIZE or
 * JOB_COMPLETION_INDEX is set (bootstrap_env_parse checks the rest); error when SLURM_STEP_NUM_TASKS (or SLURM_NTASKS inside a step)
 * is above 1 without them; else a one-rank world. */
int bootstrap_decide(char *const *envp, enum bootstrap_mode *mode, char *err, size_t errlen);

/* As bootstrap_decide and its mode say, or in `world` (hvd_init_world:
 * the environment bootstrap's mode, the environment not read). */
struct hvd_world;
int bootstrap_init(struct bootstrap *b, const struct hvd_world *world, double fence_timeout_s,
		   char *err, size_t errlen);
/* Every rank gives `len` bytes under `key`; `all` (size * len bytes) gets
 * rank 0's, rank 1's, ... Collective. */
int bootstrap_allgather(struct bootstrap *b, const char *key, const void *mine,
			size_t len, void *all, char *err, size_t errlen);
/* clean = 0 after a failure: no PMIx_Finalize, so that this process's exit
 * counts as a failed task to Slurm's mpi/pmix plugin, which then kills the
 * whole step on every node about 1 s later (measured). Otherwise ranks cut
 * off by the network keep srun waiting until Slurm declares their node
 * down (SlurmdTimeout). */
void bootstrap_finalize(struct bootstrap *b, int clean);
/* PMIx_Abort of every rank of the namespace; returns only on failure. */
int bootstrap_abort(struct bootstrap *b, int status, const char *why);

#endif
