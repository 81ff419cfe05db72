/* settings.h - every HVD_* environment variable, parsed strictly in one
 * place (settings.c). Pure: takes an environ-style array, so unit tests
 * feed it directly. What it does not do: read the process environment
 * itself or print anything (the caller logs settings_describe()).
 */
#ifndef HVD_SETTINGS_H
#define HVD_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* HVD_CPUS and the start-up report's CPU lists: the plugin's limit
 * (spank/task.c TASK_CPULIST_LEN), enough for every other CPU of a
 * 1024-CPU node ("0,2,...,1022" is 1,945 bytes). */
#define SETTINGS_CPULIST_MAX 4096

enum hvd_compression { HVD_COMPRESS_NONE = 0, HVD_COMPRESS_FP16, HVD_COMPRESS_BF16 };
enum hvd_backend_choice { HVD_BACKEND_AUTO = 0, HVD_BACKEND_MPI, HVD_BACKEND_NCCL, HVD_BACKEND_SELF,
			  HVD_BACKEND_TCP, HVD_BACKEND_HOST };
/* HVD_VOTE: how the plan cache's votes travel (vote/vote.h). */
enum hvd_vote_choice { HVD_VOTE_AUTO = 0, HVD_VOTE_SHM, HVD_VOTE_MESSAGES, HVD_VOTE_RING,
		       HVD_VOTE_OFF };

struct hvd_settings {
	uint64_t fusion_threshold_bytes; /* HVD_FUSION_THRESHOLD, 0 = no fusion */
	uint64_t fusion_chunk_bytes;     /* HVD_FUSION_CHUNK, 0 = a bucket in one piece */
	double cycle_time_ms;            /* HVD_CYCLE_TIME_MS: longest wait of a partly submitted bucket */
	enum hvd_compression compression;/* HVD_COMPRESSION */
	int sync;                        /* HVD_SYNC */
	double stall_warning_s;          /* HVD_STALL_WARNING_S, 0 = off */
	double timeout_s;                /* HVD_TIMEOUT_S */
	double heartbeat_s;              /* HVD_HEARTBEAT_S */
	enum hvd_backend_choice backend; /* HVD_BACKEND */
	enum hvd_vote_choice vote;       /* HVD_VOTE */
	char timeline_path[1024];        /* HVD_TIMELINE, "" = off */
	char secret_file[1024];          /* HVD_SECRET_FILE, "" = rank 0 makes one */
	char coord_host[256];            /* HVD_COORDINATOR host, "" = any published address */
	uint16_t coord_port;             /* HVD_COORDINATOR port, 0 = ephemeral */
	/* exported by the hvd SPANK plugin; "" when run without it */
	char gpu_busid[64];              /* HVD_GPU_BUSID */
	char cpus[SETTINGS_CPULIST_MAX]; /* HVD_CPUS */
	char numa[16];                   /* HVD_NUMA: the GPU's NUMA node */
	char socket[32];                 /* HVD_SOCKET */
	char bind[32];                   /* HVD_BIND */
};

#define SETTINGS_DEFAULT_FUSION_BYTES (128ull * 1024 * 1024)
#define SETTINGS_DEFAULT_CHUNK_BYTES (4ull << 20)

void settings_defaults(struct hvd_settings *s);
/* NAME's value in envp (NULL-terminated "NAME=value" array), NULL when
 * unset: every launch variable is looked up here. */
const char *settings_env(char *const *envp, const char *name);
/* Parses every HVD_* entry of envp (NULL-terminated "NAME=value" array).
 * Returns 0, or -1 with a one-line message naming the variable in err. */
int settings_parse(char *const *envp, struct hvd_settings *s, char *err, size_t errlen);
/* hvd_init_world's coordinator and secret file into s, checked as
 * HVD_COORDINATOR and HVD_SECRET_FILE are. 0, or -1 with err. */
int settings_world(struct hvd_settings *s, const char *coordinator, const char *secret_file,
		   char *err, size_t errlen);
/* One line per variable that was set, "HVD_X=value", but for the four the
 * plugin sets (the host table shows them) and, when world_given, the
 * launch's four that hvd_init_world replaced. Returns the count. */
int settings_describe(char *const *envp, int world_given, char *out, size_t outlen);

const char *settings_compression_name(enum hvd_compression c);

/* Compute threads: CPUs in the task's mask minus the loader's, >= 1. */
int settings_compute_threads(int mask_cpus, int loader_threads);

/* How long an engine waits in an agreement (agree.c) before rank 0
 * hears of it: well inside HVD_STALL_WARNING_S and HVD_TIMEOUT_S, at most
 * 1 s. */
double settings_escalate_s(const struct hvd_settings *s);

#endif
