/* api.c - the calls of hvd.h: start-up in the order the facts require
 * (settings, launch environment check, PMIx, host table, backend, control
 * plane, engine; without PMIx the control plane connects first and carries
 * the host table: control_env.c), submission of named collectives, handles, shutdown.
 * What it does not do: run collectives (engine.c) or watch ranks
 * (control.c). Never exits: errors come back as codes + hvd_error().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap_env.h"
#include "control/control_env.h"
#include "core/fail.h"
#include "observe/report.h"
#include "api/error.h"
#include "engine/runtime.h"

extern char **environ;

/* ---- start-up ---- */

static void fill_host_entry(const struct runtime *rt, struct host_entry *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->host, sizeof(h->host), "%s", rt->boot.hostname);
	snprintf(h->gpu_busid, sizeof(h->gpu_busid), "%s", rt->set.gpu_busid);
	snprintf(h->cpus, sizeof(h->cpus), "%s", rt->set.cpus);
	snprintf(h->numa, sizeof(h->numa), "%s", rt->set.numa);
	snprintf(h->socket, sizeof(h->socket), "%s", rt->set.socket);
	char node[96];
	snprintf(node, sizeof(node), "/sys/devices/system/node/node%s/cpulist", h->numa);
	FILE *f = h->numa[0] ? fopen(node, "r") : NULL;
	if (f && !fgets(h->numa_cpus, sizeof(h->numa_cpus), f))
		h->numa_cpus[0] = 0;
	h->numa_cpus[strcspn(h->numa_cpus, "\n")] = 0;
	if (f)
		fclose(f);
	snprintf(h->bind, sizeof(h->bind), "%s", rt->set.bind);
	h->local_rank = rt->boot.local_rank;
	h->node_id = rt->boot.node_id;
	cpu_set_t set;
	if (!sched_getaffinity(0, sizeof(set), &set)) {
		size_t used = 0;
		for (int cpu = 0; cpu < CPU_SETSIZE && used + 12 < sizeof(h->affinity); cpu++) {
			if (!CPU_ISSET(cpu, &set))
				continue;
			int last = cpu;
			while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
				last++;
			used += (size_t)(last > cpu
				? snprintf(h->affinity + used, sizeof(h->affinity) - used, "%s%d-%d", used ? "," : "", cpu, last)
				: snprintf(h->affinity + used, sizeof(h->affinity) - used, "%s%d", used ? "," : "", cpu));
			cpu = last;
		}
	}
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	if (cvd && *cvd) {
		h->gpus_visible = 1;
		for (const char *p = cvd; *p; p++)
			h->gpus_visible += *p == ',';
	}
	DIR *ib = opendir("/sys/class/infiniband");
	if (ib) {
		struct dirent *d;
		while ((d = readdir(ib)))
			h->has_ib |= d->d_name[0] != '.';
		closedir(ib);
	}
	const char *ibd = getenv("NCCL_IB_DISABLE");
	h->ib_disabled = ibd && !strcmp(ibd, "1");
}

/* HVD_BACKEND auto or host: self for one rank alone, else MPI under
 * srun, the TCP ring without PMIx (MPI cannot start without a
 * launcher); auto picks NCCL where CUDA sees a GPU that this rank was
 * given: the hvd plugin's HVD_GPU_BUSID under srun, the NVIDIA device
 * plugin's NVIDIA_VISIBLE_DEVICES in a pod. Host: never NCCL (host
 * buffers). */
static enum hvd_backend_choice pick_backend(const struct runtime *rt, enum hvd_backend_choice b)
{
	if (b != HVD_BACKEND_AUTO && b != HVD_BACKEND_HOST)
		return b;
	int env = rt->boot.mode == BOOTSTRAP_ENV, alone = rt->boot.mode == BOOTSTRAP_SINGLE ||
		  (env && rt->boot.size == 1);
	enum hvd_backend_choice pick = alone ? HVD_BACKEND_SELF : env ? HVD_BACKEND_TCP : HVD_BACKEND_MPI;
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
	const char *nvd = getenv("NVIDIA_VISIBLE_DEVICES");
	int given = env ? nvd && *nvd && strcmp(nvd, "void") && strcmp(nvd, "none")
		    : rt->boot.mode == BOOTSTRAP_PMIX && rt->set.gpu_busid[0];
	if (b == HVD_BACKEND_AUTO && !alone && given && comm_nccl_usable())
		pick = HVD_BACKEND_NCCL;
#endif
	return pick;
}

static int open_tcp(struct runtime *rt, char *err, size_t errlen)
{
	char ip[64];
	if (rt->boot.mode != BOOTSTRAP_ENV)
		return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_BACKEND: 'tcp': only "
				"for a launch without PMIx (HVD_RANK/JOB_COMPLETION_INDEX, "
				"HVD_SIZE); under srun use mpi or nccl");
	if (control_env_address(rt, ip, sizeof(ip)))
		return fail_msg(HVD_ERR_COMM, err, errlen, "hvd: tcp backend: 'local address': "
				"unknown (no connection to rank 0)");
	return comm_tcp_open(&rt->comm, &rt->boot, control_env_key(rt), ip,
			     runtime_now() + rt->set.timeout_s, err, errlen);
}

static int open_backend(struct runtime *rt, char *err, size_t errlen)
{
	enum hvd_backend_choice b = pick_backend(rt, rt->set.backend);
	if (b == HVD_BACKEND_MPI && rt->boot.mode == BOOTSTRAP_ENV)
		return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_BACKEND: 'mpi': OpenMPI "
				"needs a launcher (srun with PMIx); without one use tcp (host) "
				"or nccl (GPUs)");
	if (b == HVD_BACKEND_TCP)
		return open_tcp(rt, err, errlen);
	if (b == HVD_BACKEND_SELF) {
		if (rt->boot.size != 1)
			return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_BACKEND: 'self': "
					"only for a one-rank world, this step has %d ranks",
					rt->boot.size);
		return comm_self_open(&rt->comm, err, errlen);
	}
	if (b == HVD_BACKEND_MPI) {
#ifdef HAVE_MPI
		return comm_mpi_open(&rt->comm, rt->boot.rank, rt->boot.size, err, errlen);
#else
		return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_BACKEND: 'mpi': this "
				"build has no MPI");
#endif
	}
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
	if (rt->set.compression != HVD_COMPRESS_NONE)
		return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_COMPRESSION: '%s': not "
				"available with NCCL yet (submit fp16/bf16 tensors instead)",
				settings_compression_name(rt->set.compression));
	return comm_nccl_open(&rt->comm, &rt->boot, &rt->set, runtime_now() + rt->set.timeout_s,
			      err, errlen);
#else
	return fail_msg(HVD_ERR_SETTINGS, err, errlen, "hvd: HVD_BACKEND: 'nccl': this build has "
			"no CUDA/NCCL");
#endif
}

/* The coordination plane (a ring needs this rank's address towards rank
 * 0 and the job secret, which the control plane has). */
static int open_vote(struct runtime *rt, char *err, size_t errlen)
{
	char ip[64];
	struct vote_need need = {
		.data = &rt->comm, .boot = &rt->boot, .hosts = rt->hosts, .choice = rt->set.vote,
		.ip = control_env_address(rt, ip, sizeof(ip)) ? NULL : ip,
		.key = control_env_key(rt), .deadline = runtime_now() + rt->set.timeout_s,
	};
	return vote_open(&rt->vote, &need, err, errlen);
}

static int open_timeline(struct runtime *rt, char *err, size_t errlen)
{
	const char *path = rt->set.timeline_path;
	if (!path[0])
		return 0;
	const char *mark = strstr(path, "%r");
	if (!mark)
		return rt->boot.rank == 0 ? timeline_open(&rt->tl, path, err, errlen) : 0;
	char per_rank[1100];
	snprintf(per_rank, sizeof(per_rank), "%.*s%d%s", (int)(mark - path), path, rt->boot.rank, mark + 2);
	return timeline_open(&rt->tl, per_rank, err, errlen);
}

static void report_start(struct runtime *rt, const struct hvd_world *w)
{
	char text[16384];
	if (settings_describe(environ, w != NULL, text, sizeof(text)) > 0)
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			fprintf(stderr, "hvd: setting: %s\n", line);
	if (w)
		fprintf(stderr, "hvd: setting: a world of %d from hvd_init_world, coordinator %s\n",
			w->size, w->coordinator);
	report_format(rt->hosts, rt->boot.size, rt->comm.ops->name, text, sizeof(text));
	fputs(text, stderr);
	if (rt->boot.size > 1)
		fprintf(stderr, "hvd: votes: %s\n", rt->vote.ops ? rt->vote.ops->name
			: "none (rank 0 plans every bucket)");
	if (report_warnings(rt->hosts, rt->boot.size, rt->comm.ops->name, text, sizeof(text)))
		fputs(text, stderr);
}

/* w: hvd_init_world's (NULL: the launch's world), read during start-up only. */
static int start(struct runtime *rt, const struct hvd_world *w, char *err, size_t errlen)
{
	int rc;
	if (settings_parse(environ, &rt->set, err, errlen) ||
	    (w && settings_world(&rt->set, w->coordinator, w->secret_file, err, errlen)))
		return HVD_ERR_SETTINGS;
	if ((rc = bootstrap_init(&rt->boot, w, rt->set.timeout_s, err, errlen)))
		return rc;
	rt->hosts = calloc((size_t)rt->boot.size, sizeof(*rt->hosts));
	if (!rt->hosts)
		return HVD_ERR_NOMEM;
	struct host_entry mine;
	fill_host_entry(rt, &mine);
	if ((rc = control_listen(rt, &mine, err, errlen)))
		return rc;
	if (rt->boot.mode == BOOTSTRAP_ENV && (rc = control_env_rendezvous(rt, err, errlen)))
		return rc;
#ifdef HAVE_MPI /* the host exchange is then the fence after MPI_Init_thread (comm_mpi.c) */
	if (pick_backend(rt, rt->set.backend) == HVD_BACKEND_MPI && rt->boot.mode != BOOTSTRAP_ENV &&
	    (rc = comm_mpi_init(&rt->boot, err, errlen)))
		return rc;
#endif
	rc = bootstrap_allgather(&rt->boot, "hvd.host", &mine, sizeof(mine), rt->hosts, err, errlen);
	memset(mine.ctl_key, 0, sizeof(mine.ctl_key));
	if (rc)
		return rc;
	if (rt->boot.mode == BOOTSTRAP_ENV)
		bootstrap_env_places(&rt->boot, rt->hosts); /* local rank/size from host names */
	if ((rc = open_backend(rt, err, errlen)))
		return rc;
	if ((rc = open_timeline(rt, err, errlen)))
		return HVD_ERR_SETTINGS;
	/* the coordination plane exchanges through the bootstrap: without
	 * PMIx that goes over the control connections, before the control
	 * thread reads them; with PMIx after they exist (a ring's address) */
	int env = rt->boot.mode == BOOTSTRAP_ENV;
	if (env && (rc = open_vote(rt, err, errlen)))
		return rc;
	if ((rc = control_connect(rt, err, errlen)))
		return rc;
	if (!env && (rc = open_vote(rt, err, errlen)))
		return rc;
	if ((rc = engine_start(rt, err, errlen)))
		return rc;
	if (rt->comm.ops->library)
		rt->comm.ops->library(rt->comm_library, sizeof(rt->comm_library));
	if (rt->boot.rank == 0)
		report_start(rt, w);
	return 0;
}

static void release(struct runtime *rt, int clean)
{
	engine_stop(rt);
	control_stop(rt);
	vote_close(&rt->vote, clean && !rt->aborted);
	if (rt->comm.ops && rt->comm.ops->finalize)
		rt->comm.ops->finalize(rt->comm.ctx, clean && !rt->aborted);
	timeline_close(rt->tl);
	bootstrap_finalize(&rt->boot, clean && !rt->aborted);
	free(rt->hosts);
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->cond);
	pthread_cond_destroy(&rt->work);
	free(rt);
}

/* hvd_init in `world` (NULL: the launch's). */
static int init_in(const struct hvd_world *world)
{
	if (runtime_rt)
		return api_set_error(HVD_ERR_USAGE, "hvd: hvd_init: 'called twice': call hvd_shutdown first");
	struct runtime *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return api_set_error(HVD_ERR_NOMEM, "hvd: hvd_init: out of memory");
	memset(&runtime_lost, 0, sizeof(runtime_lost));
	/* adaptive: the submitter, a waiter and the engine hold it briefly,
	 * once per tensor; a contended lock spins a moment before it sleeps */
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&rt->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	pthread_cond_init(&rt->cond, NULL);
	pthread_cond_init(&rt->work, NULL);
	/* PMIx_Init and MPI_Init discover the topology with hwloc, whose GL
	 * component waits forever on a listener on ports 6000-6009; an XML
	 * load never probes, and HWLOC_COMPONENTS would make hwloc ignore it */
	if (!getenv("HWLOC_XMLFILE"))
		setenv("HWLOC_COMPONENTS", "-gl", 0);
	char err[2048] = "";
	int rc = start(rt, world, err, sizeof(err));
	if (rc) {
		char suffix[300] = "";
		const char *procid = getenv("SLURM_PROCID"), *ntasks = getenv("SLURM_STEP_NUM_TASKS");
		int named = strstr(err, "[rank ") != NULL;
		if (!named && rt->boot.size > 1)
			runtime_suffix(rt, suffix, sizeof(suffix));
		else if (!named && procid && ntasks) /* PMIx did not say: Slurm's view */
			snprintf(suffix, sizeof(suffix), " [rank %s/%s %s]", procid, ntasks, rt->boot.hostname);
		char text[2400];
		snprintf(text, sizeof(text), "%s%s", err[0] ? err : "hvd: hvd_init: failed", suffix);
		release(rt, 0);
		return api_set_error(rc, text);
	}
	runtime_rt = rt;
	api_set_error(HVD_OK, "");
	return HVD_OK;
}

int hvd_init(void)
{
	return init_in(NULL);
}

int hvd_init_world(const struct hvd_world *w)
{
	if (!w || w->size < 1 || w->rank < 0 || w->rank >= w->size || !w->coordinator ||
	    !w->secret_file)
		return api_set_error(HVD_ERR_USAGE, "hvd: hvd_init_world: 'world': needs 0 <= rank "
				     "< size, a coordinator and a secret file");
	return init_in(w);
}

int hvd_lost_ranks(struct hvd_lost *out)
{
	struct runtime *rt = runtime_rt;
	if (rt)
		pthread_mutex_lock(&rt->lock);
	*out = runtime_lost;
	if (rt)
		pthread_mutex_unlock(&rt->lock);
	return out->count;
}

int hvd_shutdown(void)
{
	struct runtime *rt = runtime_rt;
	if (!rt)
		return api_set_error(HVD_ERR_USAGE, "hvd: hvd_shutdown: 'not initialised': call hvd_init first");
	engine_stop(rt);
	control_stop(rt);
	int rc = rt->aborted ? rt->error_code : HVD_OK;
	if (rc)
		api_set_error(rc, rt->error);
	runtime_rt = NULL;
	release(rt, rc == HVD_OK);
	return rc;
}

int hvd_rank(void) { return runtime_rt ? runtime_rt->boot.rank : -1; }
int hvd_size(void) { return runtime_rt ? runtime_rt->boot.size : -1; }
int hvd_local_rank(void) { return runtime_rt ? runtime_rt->boot.local_rank : -1; }
int hvd_local_size(void) { return runtime_rt ? runtime_rt->boot.local_size : -1; }
int hvd_abort_job(int status)
{
	struct runtime *rt = runtime_rt;
	char err[2048];
	if (rt && rt->boot.mode == BOOTSTRAP_ENV && rt->boot.size > 1) {
		int rc = control_env_abort(rt, status, err, sizeof(err));
		return rc ? api_set_error(rc, err) : HVD_OK;
	}
	if (!rt || rt->boot.mode != BOOTSTRAP_PMIX)
		return api_set_error(HVD_ERR_USAGE, "hvd: hvd_abort_job: 'no launcher': not under srun "
				 "with PMIx, or hvd_init was not called");
	control_before_launcher_abort(rt);
	char why[sizeof(rt->error)];
	pthread_mutex_lock(&rt->lock);
	snprintf(why, sizeof(why), "%s", rt->aborted ? rt->error : "hvd: hvd_abort_job");
	pthread_mutex_unlock(&rt->lock);
	return bootstrap_abort(&rt->boot, status, why);
}

int hvd_node_id(void) { return runtime_rt ? runtime_rt->boot.node_id : -1; }
int hvd_node_count(void) { return runtime_rt ? runtime_rt->boot.node_count : -1; }
const char *hvd_hostname(void) { return runtime_rt ? runtime_rt->boot.hostname : ""; }
const char *hvd_backend_name(void) { return runtime_rt && runtime_rt->comm.ops ? runtime_rt->comm.ops->name : ""; }
const char *hvd_backend_library(void) { return runtime_rt ? runtime_rt->comm_library : ""; }

int hvd_compute_threads(int loader_threads)
{
	cpu_set_t set;
	int cpus = sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
	return settings_compute_threads(cpus, loader_threads);
}

int hvd_set_compute_stream(void *cuda_stream)
{
	if (!runtime_rt)
		return api_set_error(HVD_ERR_USAGE, "hvd: hvd_set_compute_stream: 'not initialised': call hvd_init first");
	runtime_rt->compute_stream = cuda_stream;
	return HVD_OK;
}

void hvd_timeline_begin(const char *lane, const char *name)
{
	if (runtime_rt && runtime_rt->tl && lane && name)
		timeline_begin(runtime_rt->tl, lane, name);
}

void hvd_timeline_end(const char *lane)
{
	if (runtime_rt && runtime_rt->tl && lane)
		timeline_end(runtime_rt->tl, lane, NULL);
}
