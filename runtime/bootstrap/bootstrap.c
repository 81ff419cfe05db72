/* bootstrap.c - see bootstrap.h. One PMIx client per task: a second
 * PMIx program in the same task gets PMIX_ERR_NOT_FOUND for per-process
 * keys (measured), which we turn into a message that says so. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/bootstrap_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "core/clock.h"
#include "core/fail.h"
#include "core/settings.h"
#include "hvd.h"

static long env_tasks(char *const *envp)
{
	const char *v = settings_env(envp, "SLURM_STEP_NUM_TASKS");
	if (!v && settings_env(envp, "SLURM_STEP_ID"))
		v = settings_env(envp, "SLURM_NTASKS");
	if (!v)
		return 0;
	char *end;
	long n = strtol(v, &end, 10);
	return (*v && !*end && n > 0) ? n : 0;
}

int bootstrap_decide(char *const *envp, enum bootstrap_mode *mode, char *err, size_t errlen)
{
	long tasks = env_tasks(envp);
	*mode = BOOTSTRAP_SINGLE;
	if (settings_env(envp, "PMIX_NAMESPACE") && settings_env(envp, "PMIX_RANK"))
		*mode = BOOTSTRAP_PMIX;
	else if (settings_env(envp, "HVD_RANK") || settings_env(envp, "HVD_SIZE") ||
		 settings_env(envp, "JOB_COMPLETION_INDEX"))
		*mode = BOOTSTRAP_ENV;
	if (*mode != BOOTSTRAP_SINGLE || tasks <= 1)
		return 0;
	const char *rank = settings_env(envp, "SLURM_PROCID");
	const char *mpi = settings_env(envp, "SLURM_MPI_TYPE");
	const char *node = settings_env(envp, "SLURMD_NODENAME");
	return fail_msg(-1, err, errlen, "hvd: this step has %ld tasks but no PMIx server "
			"(SLURM_MPI_TYPE=%s); run srun --mpi=pmix or set MpiDefault=pmix [rank "
			"%s/%ld%s%s]", tasks, mpi ? mpi : "unset", rank ? rank : "?", tasks,
			node ? " " : "", node ? node : "");
}

/* PMIx's number under key into *out (untouched on failure). */
static int pmix_get_number(const pmix_proc_t *who, const char *key, int *out, char *err,
			   size_t errlen)
{
	pmix_value_t *val = NULL;
	pmix_status_t rc = PMIx_Get(who, key, NULL, 0, &val);
	if (rc != PMIX_SUCCESS)
		return fail_msg(-1, err, errlen, "hvd: PMIx_Get: '%s': %s%s", key,
				PMIx_Error_string(rc), rc == PMIX_ERR_NOT_FOUND ? " (is a second "
				"hvd/MPI program running in this task? one PMIx client per task: "
				"give each program its own srun step)" : "");
	pmix_status_t st;
	long n = 0;
	PMIX_VALUE_GET_NUMBER(st, val, n, long);
	PMIX_VALUE_RELEASE(val);
	if (st != PMIX_SUCCESS)
		return fail_msg(-1, err, errlen, "hvd: PMIx_Get: '%s': not a number", key);
	*out = (int)n;
	return 0;
}

static int pmix_start(struct bootstrap *b, char *err, size_t errlen)
{
	pmix_proc_t *me = calloc(1, sizeof(*me));
	if (!me)
		return HVD_ERR_NOMEM;
	pmix_status_t rc = PMIx_Init(me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		snprintf(err, errlen, "hvd: PMIx_Init: '%s': %s; run under srun --mpi=pmix",
			 getenv("PMIX_NAMESPACE") ? getenv("PMIX_NAMESPACE") : "", PMIx_Error_string(rc));
		free(me);
		return HVD_ERR_BOOTSTRAP;
	}
	b->pmix = me;
	b->rank = (int)me->rank;
	pmix_proc_t job;
	PMIX_LOAD_PROCID(&job, me->nspace, PMIX_RANK_WILDCARD);
	/* the size last: a failed start-up's message names PMIx's rank/size
	 * only when it has them all (api.c) */
	if (pmix_get_number(me, PMIX_LOCAL_RANK, &b->local_rank, err, errlen) ||
	    pmix_get_number(&job, PMIX_LOCAL_SIZE, &b->local_size, err, errlen) ||
	    pmix_get_number(me, PMIX_NODEID, &b->node_id, err, errlen) ||
	    pmix_get_number(&job, PMIX_NUM_NODES, &b->node_count, err, errlen) ||
	    pmix_get_number(&job, PMIX_JOB_SIZE, &b->size, err, errlen))
		return HVD_ERR_BOOTSTRAP;
	return 0;
}

int bootstrap_init(struct bootstrap *b, const struct hvd_world *world, double fence_timeout_s,
		   char *err, size_t errlen)
{
	extern char **environ;
	*b = (struct bootstrap){ .size = 1, .local_size = 1, .node_count = 1,
				 .fence_timeout_s = fence_timeout_s };
	gethostname(b->hostname, sizeof(b->hostname) - 1);
	b->hostname[strcspn(b->hostname, ".")] = '\0';
	if (world) { /* hvd_init_world checked it; local rank/size as below */
		b->mode = BOOTSTRAP_ENV;
		b->rank = world->rank;
		b->size = world->size;
		return 0;
	}
	if (bootstrap_decide(environ, &b->mode, err, errlen))
		return HVD_ERR_BOOTSTRAP;
	if (b->mode == BOOTSTRAP_SINGLE)
		return 0;
	if (b->mode == BOOTSTRAP_ENV) /* local rank/size: after the host exchange */
		return bootstrap_env_parse(environ, &b->rank, &b->size, err, errlen)
		       ? HVD_ERR_BOOTSTRAP : 0;
	int rc = pmix_start(b, err, errlen);
	if (rc)
		bootstrap_finalize(b, 0);
	return rc;
}

static int fence_collect(struct bootstrap *b, char *err, size_t errlen)
{
	pmix_proc_t *me = b->pmix;
	pmix_proc_t all;
	PMIX_LOAD_PROCID(&all, me->nspace, PMIX_RANK_WILDCARD);
	pmix_info_t info[2];
	bool collect = true;
	int timeout = (int)(b->fence_timeout_s + 0.5);
	PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
	double t0 = runtime_now();
	pmix_status_t rc = PMIx_Fence(&all, 1, info, 2);
	b->last_fence_s = runtime_now() - t0;
	PMIX_INFO_DESTRUCT(&info[0]);
	PMIX_INFO_DESTRUCT(&info[1]);
	if (rc != PMIX_SUCCESS)
		return fail_msg(HVD_ERR_BOOTSTRAP, err, errlen, "hvd: PMIx_Fence: '%s': %s (a "
				"rank did not reach hvd_init within %d s?)", me->nspace,
				PMIx_Error_string(rc), timeout);
	return 0;
}

static int put_blob(struct bootstrap *b, const char *key, const void *mine, size_t len,
		    char *err, size_t errlen)
{
	pmix_value_t v;
	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)mine;
	v.data.bo.size = len;
	pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc == PMIX_SUCCESS)
		rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS)
		return fail_msg(HVD_ERR_BOOTSTRAP, err, errlen, "hvd: PMIx_Put: '%s': %s", key,
				PMIx_Error_string(rc));
	return 0;
}

static int get_blob(struct bootstrap *b, int rank, const char *key, void *out, size_t len,
		    char *err, size_t errlen)
{
	pmix_proc_t *me = b->pmix;
	pmix_proc_t who;
	PMIX_LOAD_PROCID(&who, me->nspace, (pmix_rank_t)rank);
	pmix_value_t *val = NULL;
	pmix_status_t rc = PMIx_Get(&who, key, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || val->type != PMIX_BYTE_OBJECT || val->data.bo.size != len) {
		snprintf(err, errlen, "hvd: PMIx_Get: '%s' of rank %d: %s", key, rank,
			 rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "unexpected type or size");
		if (val)
			PMIX_VALUE_RELEASE(val);
		return HVD_ERR_BOOTSTRAP;
	}
	memcpy(out, val->data.bo.bytes, len);
	PMIX_VALUE_RELEASE(val);
	return 0;
}

int bootstrap_allgather(struct bootstrap *b, const char *key, const void *mine,
			size_t len, void *all, char *err, size_t errlen)
{
	if (b->mode == BOOTSTRAP_SINGLE || b->size == 1) {
		memcpy(all, mine, len);
		return 0;
	}
	if (b->mode == BOOTSTRAP_ENV) {
		if (b->exchange)
			return b->exchange(b->exchange_ctx, key, mine, len, all, err, errlen);
		return fail_msg(HVD_ERR_BOOTSTRAP, err, errlen, "hvd: bootstrap: '%s': no "
				"connection to rank 0 yet", key);
	}
	int rc = put_blob(b, key, mine, len, err, errlen);
	if (!rc)
		rc = fence_collect(b, err, errlen);
	for (int r = 0; !rc && r < b->size; r++) {
		if (r == b->rank)
			memcpy((char *)all + (size_t)r * len, mine, len);
		else
			rc = get_blob(b, r, key, (char *)all + (size_t)r * len, len, err, errlen);
	}
	return rc;
}

void bootstrap_finalize(struct bootstrap *b, int clean)
{
	if (b->pmix) {
		if (clean)
			PMIx_Finalize(NULL, 0);
		free(b->pmix);
		b->pmix = NULL;
	}
}

int bootstrap_abort(struct bootstrap *b, int status, const char *why)
{
	if (!b->pmix)
		return HVD_ERR_USAGE;
	pmix_status_t rc = PMIx_Abort(status, why, NULL, 0);
	return rc == PMIX_SUCCESS ? HVD_OK : HVD_ERR_BOOTSTRAP;
}
