/* test_runtime_units.c - libhvd's pure parts without Slurm: the settings
 * parser (every variable, bad values name the variable), bucket planning,
 * signatures, the coordinator (ready positions, mismatch, stall view),
 * the launch decision, dtype conversions, the timeline (parsed back with
 * cJSON after every event), the start-up report's warnings, and the
 * engines' vote on a repeated bucket (agree.c, one rank).
 * What it does not do: start ranks (test_runtime_slurm.c does).
 */
#define _GNU_SOURCE
#include <math.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bootstrap/bootstrap.h"
#include "plan/coord.h"
#include "core/dtype.h"
#include "plan/fusion.h"
#include "plan/plan_cache.h"
#include "runner.h"
#include "engine/runtime.h"
#include "transport/comm.h"
#include "transport/iface_shared.h"
#include "core/csv_list.h"
#include "observe/report.h"
#include "core/settings.h"
#include "observe/timeline.h"

/* ---- settings ---- */

static void test_settings_defaults_match_horovod(void)
{
	char *env[] = { "PATH=/bin", NULL };
	struct hvd_settings s;
	char err[512] = "";
	CHECK_INT(settings_parse(env, &s, err, sizeof(err)), 0);
	CHECK_INT(s.fusion_threshold_bytes, 128ull << 20);
	CHECK_NEAR(s.cycle_time_ms, 1.0, 0, 0);
	CHECK_NEAR(s.stall_warning_s, 60.0, 0, 0);
	CHECK_NEAR(s.timeout_s, 300.0, 0, 0);
	CHECK_NEAR(s.heartbeat_s, 1.0, 0, 0);
	CHECK_INT(s.compression, HVD_COMPRESS_NONE);
	CHECK_INT(s.fusion_chunk_bytes, 4 << 20);
	CHECK_INT(s.sync, 0);
	CHECK_STR(s.timeline_path, "");
}

static void test_settings_every_variable_parses(void)
{
	char *env[] = { "HVD_FUSION_THRESHOLD=0", "HVD_CYCLE_TIME_MS=2.5", "HVD_COMPRESSION=bf16",
			"HVD_SYNC=1", "HVD_STALL_WARNING_S=0", "HVD_TIMEOUT_S=7",
			"HVD_HEARTBEAT_S=0.5", "HVD_BACKEND=mpi", "HVD_TIMELINE=/tmp/t.json",
			"HVD_GPU_BUSID=0000:3b:00.0", "HVD_CPUS=0-19", "HVD_SOCKET=0",
			"HVD_BIND=socket", "HVD_FUSION_CHUNK=65536", "HVD_VOTE=ring", "OTHER=1", NULL };
	struct hvd_settings s;
	char err[512] = "";
	CHECK_INT(settings_parse(env, &s, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(s.fusion_threshold_bytes, 0);
	CHECK_INT(s.fusion_chunk_bytes, 65536);
	CHECK_NEAR(s.cycle_time_ms, 2.5, 0, 0);
	CHECK_INT(s.compression, HVD_COMPRESS_BF16);
	CHECK_INT(s.sync, 1);
	CHECK_NEAR(s.stall_warning_s, 0, 0, 0);
	CHECK_NEAR(s.timeout_s, 7, 0, 0);
	CHECK_NEAR(s.heartbeat_s, 0.5, 0, 0);
	CHECK_INT(s.backend, HVD_BACKEND_MPI);
	CHECK_INT(s.vote, HVD_VOTE_RING);
	CHECK_STR(s.timeline_path, "/tmp/t.json");
	CHECK_STR(s.gpu_busid, "0000:3b:00.0");
	CHECK_STR(s.cpus, "0-19");
	CHECK_STR(s.socket, "0");
	CHECK_STR(s.bind, "socket");
	char *host[] = { "HVD_BACKEND=host", NULL }; /* chexnet's on a host backend */
	CHECK_INT(settings_parse(host, &s, err, sizeof(err)), 0);
	CHECK_INT(s.backend, HVD_BACKEND_HOST);
}

static void expect_bad(const char *entry, const char *name, const char *value)
{
	char *env[] = { (char *)entry, NULL };
	struct hvd_settings s;
	char err[512] = "";
	CHECK_MSG(settings_parse(env, &s, err, sizeof(err)) == -1, "%s accepted", entry);
	CHECK_CONTAINS(err, name);
	CHECK_CONTAINS(err, value);
	CHECK(strncmp(err, "hvd: ", 5) == 0);
}

static void test_settings_bad_values_name_the_variable(void)
{
	expect_bad("HVD_FUSION_THRESHOLD=abc", "HVD_FUSION_THRESHOLD", "'abc'");
	expect_bad("HVD_FUSION_THRESHOLD=-1", "HVD_FUSION_THRESHOLD", "'-1'");
	expect_bad("HVD_FUSION_THRESHOLD=64MB", "HVD_FUSION_THRESHOLD", "'64MB'");
	expect_bad("HVD_FUSION_THRESHOLD=", "HVD_FUSION_THRESHOLD", "''");
	expect_bad("HVD_FUSION_CHUNK=Auto", "HVD_FUSION_CHUNK", "'Auto'");
	expect_bad("HVD_FUSION_CHUNK=auto", "HVD_FUSION_CHUNK", "'auto': no longer tuned: give bytes");
	expect_bad("HVD_FUSION_CHUNK=1M", "HVD_FUSION_CHUNK", "'1M'");
	expect_bad("HVD_CYCLE_TIME_MS=1ms", "HVD_CYCLE_TIME_MS", "'1ms'");
	expect_bad("HVD_CYCLE_TIME_MS=-2", "HVD_CYCLE_TIME_MS", "out of range");
	expect_bad("HVD_CYCLE_TIME_MS=nan", "HVD_CYCLE_TIME_MS", "'nan'");
	expect_bad("HVD_COMPRESSION=fp8", "HVD_COMPRESSION", "not one of the choices (none|fp16|bf16)");
	expect_bad("HVD_COMPRESSION=fp", "HVD_COMPRESSION", "'fp': not one of the choices");
	expect_bad("HVD_COMPRESSION=", "HVD_COMPRESSION", "'': not one of the choices");
	expect_bad("HVD_SYNC=yes", "HVD_SYNC", "(0|1)");
	expect_bad("HVD_SYNC=1|", "HVD_SYNC", "'1|': not one of the choices");
	expect_bad("HVD_VOTE=mpi", "HVD_VOTE", "not one of the choices (auto|shm|messages|ring|off)");
	expect_bad("HVD_BACKEND=gpu", "HVD_BACKEND", "not one of the choices (auto|mpi|nccl|self|tcp|host)");
	expect_bad("HVD_SHM=0", "HVD_SHM", "'0': removed: HVD_VOTE picks how");
	expect_bad("HVD_TIMEOUT_S=0", "HVD_TIMEOUT_S", "out of range");
	expect_bad("HVD_TIMEOUT_S= 5", "HVD_TIMEOUT_S", "not a number");
	expect_bad("HVD_STALL_WARNING_S=x", "HVD_STALL_WARNING_S", "'x'");
	expect_bad("HVD_HEARTBEAT_S=0", "HVD_HEARTBEAT_S", "out of range");
	expect_bad("HVD_BACKEND=gloo", "HVD_BACKEND", "'gloo'");
	expect_bad("HVD_TIMELINE=", "HVD_TIMELINE", "must not be empty");
	expect_bad("HVD_FUSION_TRESHOLD=1", "HVD_FUSION_TRESHOLD", "did you mean HVD_FUSION_THRESHOLD?");
	expect_bad("HVD_TIMEOUT=5", "HVD_TIMEOUT", "did you mean HVD_TIMEOUT_S?");
	expect_bad("HVD_GPU_BUS_ID=x", "HVD_GPU_BUS_ID", "did you mean HVD_GPU_BUSID?");
}

static void test_settings_other_tools_variables_pass(void)
{
	char *env[] = { "HVD_SRC=/src", "HVD_BUILD=/src/build", "HVD_TEST_KEEP=1", NULL };
	struct hvd_settings s;
	char err[512] = "";
	CHECK_INT(settings_parse(env, &s, err, sizeof(err)), 0);
	char out[256];
	CHECK_INT(settings_describe(env, 0, out, sizeof(out)), 0);
}

static void test_settings_cross_checks(void)
{
	char *env0[] = { "HVD_TIMEOUT_S=1", NULL }; /* defaults follow a short timeout */
	char *env1[] = { "HVD_TIMEOUT_S=5", "HVD_STALL_WARNING_S=60", NULL };
	char *env2[] = { "HVD_TIMEOUT_S=5", "HVD_STALL_WARNING_S=0", "HVD_HEARTBEAT_S=3", NULL };
	char *env3[] = { "HVD_TIMEOUT_S=5", "HVD_STALL_WARNING_S=2", NULL };
	struct hvd_settings s;
	char err[512] = "";
	CHECK_INT(settings_parse(env0, &s, err, sizeof(err)), 0);
	CHECK_NEAR(s.stall_warning_s, 0.5, 1e-12, 0);
	CHECK_NEAR(s.heartbeat_s, 0.25, 1e-12, 0);
	CHECK_INT(settings_parse(env1, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "HVD_STALL_WARNING_S: '60': must be below HVD_TIMEOUT_S");
	CHECK_INT(settings_parse(env2, &s, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "HVD_HEARTBEAT_S");
	CHECK_INT(settings_parse(env3, &s, err, sizeof(err)), 0);
}

static void test_settings_describe_lists_what_is_set(void)
{
	char *env[] = { "A=1", "HVD_SYNC=1", "HVD_SRC=x", "HVD_TIMEOUT_S=9", NULL };
	char out[256];
	CHECK_INT(settings_describe(env, 0, out, sizeof(out)), 2);
	CHECK_STR(out, "HVD_SYNC=1\nHVD_TIMEOUT_S=9");
}

static void test_compute_threads_subtract_loader(void)
{
	CHECK_INT(settings_compute_threads(20, 4), 16);
	CHECK_INT(settings_compute_threads(2, 4), 1);
	CHECK_INT(settings_compute_threads(1, 0), 1);
	CHECK_INT(settings_compute_threads(8, -1), 8);
}

/* ---- launch decision ---- */

static void test_launch_decision_from_environment(void)
{
	enum bootstrap_mode m = BOOTSTRAP_PMIX;
	char err[512] = "";
	char *alone[] = { "PATH=/bin", NULL };
	CHECK_INT(bootstrap_decide(alone, &m, err, sizeof(err)), 0);
	CHECK_INT(m, BOOTSTRAP_SINGLE);
	char *pmix[] = { "SLURM_STEP_NUM_TASKS=4", "PMIX_NAMESPACE=slurm.pmix.1.0", "PMIX_RANK=2", NULL };
	CHECK_INT(bootstrap_decide(pmix, &m, err, sizeof(err)), 0);
	CHECK_INT(m, BOOTSTRAP_PMIX);
	char *one_task[] = { "SLURM_STEP_NUM_TASKS=1", "SLURM_STEP_ID=0", NULL };
	CHECK_INT(bootstrap_decide(one_task, &m, err, sizeof(err)), 0);
	CHECK_INT(m, BOOTSTRAP_SINGLE);
	char *no_pmix[] = { "SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=1", "SLURM_MPI_TYPE=none", NULL };
	CHECK_INT(bootstrap_decide(no_pmix, &m, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: this step has 2 tasks but no PMIx server");
	CHECK_CONTAINS(err, "run srun --mpi=pmix or set MpiDefault=pmix");
	CHECK_CONTAINS(err, "[rank 1/2");
	char *ntasks[] = { "SLURM_NTASKS=3", "SLURM_STEP_ID=0", NULL };
	CHECK_INT(bootstrap_decide(ntasks, &m, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "3 tasks");
	char *batch[] = { "SLURM_NTASKS=3", NULL }; /* batch script: no step */
	CHECK_INT(bootstrap_decide(batch, &m, err, sizeof(err)), 0);
}

/* ---- fusion ---- */

static struct fusion_item item(const char *name, uint64_t count, enum hvd_dtype t,
			       enum hvd_op op, enum fusion_kind kind)
{
	struct fusion_item it;
	memset(&it, 0, sizeof(it));
	snprintf(it.name, sizeof(it.name), "%s", name);
	it.count = count;
	it.dtype = (uint8_t)t;
	it.op = (uint8_t)op;
	it.kind = (uint8_t)kind;
	return it;
}

static void test_fusion_plan_respects_threshold(void)
{
	struct fusion_item it[6] = {
		item("a", 100, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),  /* 400 B */
		item("b", 100, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),  /* 400 B */
		item("c", 100, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),  /* 400 B: > 1000 with a+b */
		item("d", 1000, HVD_F32, HVD_SUM, FUSION_ALLREDUCE), /* 4000 B: above threshold */
		item("e", 10, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
		item("f", 10, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
	};
	struct fusion_bucket b[6];
	size_t n = fusion_plan(it, 6, 1000, b);
	CHECK_INT(n, 4);
	CHECK_INT(b[0].first, 0); CHECK_INT(b[0].count, 2); CHECK_INT(b[0].bytes, 800);
	CHECK_INT(b[1].first, 2); CHECK_INT(b[1].count, 1);
	CHECK_INT(b[2].first, 3); CHECK_INT(b[2].count, 1); CHECK_INT(b[2].bytes, 4000);
	CHECK_INT(b[3].first, 4); CHECK_INT(b[3].count, 2);
	/* threshold 0: no fusion at all */
	CHECK_INT(fusion_plan(it, 6, 0, b), 6);
	/* the default threshold fuses everything here */
	CHECK_INT(fusion_plan(it, 6, 128u << 20, b), 1);
	CHECK_INT(b[0].bytes, 400 * 3 + 4000 + 80);
}

static void test_fusion_plan_splits_on_dtype_op_and_kind(void)
{
	struct fusion_item it[6] = {
		item("a", 1, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
		item("b", 1, HVD_F16, HVD_SUM, FUSION_ALLREDUCE),
		item("c", 1, HVD_F16, HVD_AVERAGE, FUSION_ALLREDUCE),
		item("d", 1, HVD_F16, HVD_AVERAGE, FUSION_ALLREDUCE),
		item("e", 1, HVD_F16, HVD_SUM, FUSION_BROADCAST),
		item("f", 1, HVD_F16, HVD_SUM, FUSION_BROADCAST),
	};
	struct fusion_bucket b[6];
	size_t n = fusion_plan(it, 6, 1 << 20, b);
	CHECK_INT(n, 5);
	CHECK_INT(b[2].first, 2);
	CHECK_INT(b[2].count, 2);
	CHECK_INT(b[3].count, 1);
	CHECK_INT(b[4].count, 1);
}

static void test_signature_sees_names_counts_dtypes(void)
{
	struct fusion_item a[2] = { item("x", 10, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
				    item("y", 20, HVD_F32, HVD_SUM, FUSION_ALLREDUCE) };
	struct fusion_item b[2];
	memcpy(b, a, sizeof(a));
	uint64_t s = fusion_signature(a, 2);
	CHECK(s == fusion_signature(b, 2));
	b[1].count = 21;
	CHECK(s != fusion_signature(b, 2));
	memcpy(b, a, sizeof(a));
	b[0].dtype = HVD_BF16;
	CHECK(s != fusion_signature(b, 2));
	memcpy(b, a, sizeof(a));
	snprintf(b[1].name, sizeof(b[1].name), "z");
	CHECK(s != fusion_signature(b, 2));
	memcpy(b, a, sizeof(a));
	b[0].op = HVD_AVERAGE;
	CHECK(s != fusion_signature(b, 2));
	CHECK(fusion_signature(a, 1) != fusion_signature(a, 2));
	/* allgather counts may differ between ranks */
	struct fusion_item g1 = item("g", 3, HVD_F32, HVD_SUM, FUSION_ALLGATHER), g2 = g1;
	g2.count = 7;
	CHECK(fusion_signature(&g1, 1) == fusion_signature(&g2, 1));
	CHECK(fusion_item_matches(&g1, &g2));
}

/* ---- coordinator ---- */

#define NO_TAG ((struct plan_tag){ -1, 0 }) /* not from the plan cache */

static void test_coord_plans_only_what_every_rank_submitted(void)
{
	struct coord c;
	CHECK_INT(coord_init(&c, 3, 1 << 20), 0);
	struct fusion_item a = item("a", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	struct fusion_item b = item("b", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	CHECK_INT(coord_submit(&c, 0, &a, NO_TAG, 1.0), 0);
	CHECK_INT(coord_submit(&c, 0, &b, NO_TAG, 1.0), 1);
	CHECK_INT(coord_submit(&c, 1, &a, NO_TAG, 1.5), 0);
	CHECK_INT(coord_ready(&c), 0);
	CHECK_NEAR(coord_oldest_wait(&c, 4.0), 3.0, 1e-9, 0);
	int behind[3];
	char text[256];
	CHECK_INT(coord_describe_missing(&c, text, sizeof(text), behind), 2);
	CHECK_STR(text, "rank 1: [b]; rank 2: [a, b]");
	CHECK(!behind[0] && behind[1] && behind[2]);
	CHECK_INT(coord_submit(&c, 2, &a, NO_TAG, 2.0), 0);
	CHECK_INT(coord_ready(&c), 1);
	struct coord_exec ex[2];
	char err[512];
	CHECK_INT(coord_plan(&c, NULL, 1, ex, err, sizeof(err)), 1);
	CHECK_INT(ex[0].first, 0);
	CHECK_INT(ex[0].count, 1);
	CHECK(ex[0].signature == fusion_signature(&a, 1));
	CHECK_INT(coord_ready(&c), 0);
	coord_submit(&c, 1, &b, NO_TAG, 3.0);
	coord_submit(&c, 2, &b, NO_TAG, 3.0);
	CHECK_INT(coord_plan(&c, NULL, 1, ex, err, sizeof(err)), 1);
	CHECK_INT(ex[0].first, 1);
	CHECK_NEAR(coord_oldest_wait(&c, 9.0), 0, 0, 0);
	coord_free(&c);
}

static void test_coord_mismatch_names_tensors_and_ranks(void)
{
	struct coord c;
	coord_init(&c, 2, 1 << 20);
	struct fusion_item a = item("grad.common", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	struct fusion_item b = item("grad.other", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	coord_submit(&c, 0, &a, NO_TAG, 0);
	coord_submit(&c, 1, &b, NO_TAG, 0);
	struct coord_exec ex[1];
	char err[1024] = "";
	CHECK_INT(coord_plan(&c, NULL, 1, ex, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: tensor mismatch: ");
	CHECK_CONTAINS(err, "'grad.common'");
	CHECK_CONTAINS(err, "'grad.other'");
	CHECK_CONTAINS(err, "rank 0 submitted");
	CHECK_CONTAINS(err, "rank 1 submitted");
	coord_free(&c);
	/* same name, different count */
	coord_init(&c, 2, 1 << 20);
	struct fusion_item d = item("grad.common", 5, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	coord_submit(&c, 0, &a, NO_TAG, 0);
	coord_submit(&c, 1, &d, NO_TAG, 0);
	CHECK_INT(coord_plan(&c, NULL, 1, ex, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "x5");
	coord_free(&c);
}

/* ---- plan cache ---- */

static void test_plan_cache_follows_a_repeated_sequence(void)
{
	struct plan_cache pc = { 0 };
	struct fusion_item it[4] = { item("a", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
				     item("b", 8, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
				     item("c", 2, HVD_F32, HVD_SUM, FUSION_ALLREDUCE),
				     item("d", 2, HVD_F32, HVD_SUM, FUSION_ALLREDUCE) };
	struct plan_cursor cur = { -1, 0 };
	CHECK_INT(plan_cursor_next(&pc, &cur, &it[0]).id, -1); /* empty cache */
	CHECK(plan_cache_can_learn(&pc, it, 3));
	CHECK_INT((int)plan_cache_learn(&pc, it, 3), 0);
	CHECK(plan_cache_entry(&pc, 0)->signature == fusion_signature(it, 3));
	CHECK_INT((int)plan_cache_entry(&pc, 0)->bytes, (4 + 8 + 2) * 4);
	CHECK_INT((int)plan_cache_entry(&pc, 1)->bytes, 0); /* unknown */
	for (int k = 0; k < 3; k++) {
		struct plan_tag t = plan_cursor_next(&pc, &cur, &it[k]);
		CHECK(t.id == 0 && t.off == (uint32_t)k);
	}
	CHECK_INT(plan_cursor_next(&pc, &cur, &it[3]).id, -1);
	struct fusion_item grown = it[1];
	grown.count = 9;
	CHECK_INT(plan_cursor_next(&pc, &cur, &it[0]).id, 0);
	CHECK_INT(plan_cursor_next(&pc, &cur, &grown).id, -1); /* changed count */
	CHECK_INT(plan_cursor_next(&pc, &cur, &it[2]).id, -1); /* mid-bucket: no restart */
	CHECK_INT((int)plan_cache_learn(&pc, it, 1), 1);       /* the latest "a" wins */
	struct plan_tag t = plan_cursor_next(&pc, &cur, &it[0]);
	CHECK(t.id == 1 && t.off == 0);
	struct fusion_item bc = item("x", 1, HVD_F32, HVD_SUM, FUSION_BROADCAST);
	CHECK(!plan_cache_can_learn(&pc, &bc, 1));
	char why[160];
	CHECK_INT(plan_cache_check_run(&pc, 0, 1, 2, why, sizeof(why)), 0);
	CHECK_INT(plan_cache_check_run(&pc, 0, 2, 2, why, sizeof(why)), -1);
	CHECK_CONTAINS(why, "of cached bucket 0 of 3 tensors");
	CHECK_INT(plan_cache_check_run(&pc, 0, 0, 0, why, sizeof(why)), -1);
	CHECK_INT(plan_cache_check_run(&pc, 2, 0, 1, why, sizeof(why)), -1);
	CHECK_CONTAINS(why, "unknown");
	plan_cache_free(&pc);
}

/* ---- the engines' agreement (agree.c) on a one-rank runtime ---- */

static struct entry *agree_entry(struct runtime *rt, const char *name, size_t count)
{
	struct entry *e = calloc(1, sizeof(*e));
	snprintf(e->item.name, sizeof(e->item.name), "%s", name);
	e->item.count = count;
	e->data = calloc(count, sizeof(float)); /* f32: what it held, i + name[0] */
	for (size_t i = 0; i < count; i++)
		((float *)e->data)[i] = (float)(i + (size_t)name[0]);
	runtime_queue_entry(rt, e);
	return e;
}

/* A one-rank runtime whose plan cache holds one bucket: a (3), b (5). */
static struct runtime *agree_runtime(void)
{
	struct runtime *rt = calloc(1, sizeof(*rt));
	char err[256];
	settings_defaults(&rt->set);
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->cond, NULL);
	pthread_cond_init(&rt->work, NULL);
	CHECK_INT(comm_self_open(&rt->comm, err, sizeof(err)), 0);
	rt->boot.size = 1;
	struct vote_need need = { .data = &rt->comm, .boot = &rt->boot, .choice = HVD_VOTE_AUTO };
	CHECK_INT(vote_open(&rt->vote, &need, err, sizeof(err)), 0);
	memset(&rt->cache, 0, sizeof(rt->cache));
	rt->cursor.id = -1;
	struct fusion_item ab[2] = { { .count = 3 }, { .count = 5 } };
	snprintf(ab[0].name, sizeof(ab[0].name), "a");
	snprintf(ab[1].name, sizeof(ab[1].name), "b");
	CHECK_INT((int)plan_cache_learn(&rt->cache, ab, 2), 0);
	rt->fast = 1;
	return rt;
}

static void agree_runtime_free(struct runtime *rt)
{
	if (rt->fusion_buf)
		rt->comm.ops->release(rt->comm.ctx, rt->fusion_buf);
	plan_cache_free(&rt->cache);
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->cond);
	pthread_cond_destroy(&rt->work);
	free(rt);
}

static void agree_drop(struct runtime *rt, size_t n)
{
	for (size_t i = 0; i < n && rt->pending; i++) {
		struct entry *e = rt->pending;
		rt->pending = e->next;
		free(e->data);
		free(e);
	}
	if (!rt->pending)
		rt->pending_tail = NULL;
}

/* A run completed "just now" for as long as the test needs: a test thread
 * descheduled for AGREE_WAITER_PROMPT_S (50 us) must not age it. */
static void keep_completion_fresh(struct runtime *rt)
{
	CHECK(rt->run_completed_at > 0);
	rt->run_completed_at = runtime_now() + 3600;
}

static void test_agreement_votes_on_a_repeated_bucket(void)
{
	struct runtime *rt = agree_runtime();
	double wake_at = 0;
	rt->set.cycle_time_ms = 10000; /* the partial run below is not yet overdue when descheduled */
	pthread_mutex_lock(&rt->lock);
	CHECK(agree_next(rt, 0, 0, &wake_at) == NULL); /* nothing submitted: no vote */
	CHECK(wake_at == 0 && rt->fast);
	agree_entry(rt, "a", 3)->t_submit = runtime_now();
	CHECK(agree_next(rt, 0, 0, &wake_at) == NULL); /* partial: waits HVD_CYCLE_TIME_MS */
	CHECK(wake_at > 0 && rt->fast);
	agree_entry(rt, "b", 5);
	struct exec_cmd *cmd = agree_next(rt, 0, 0, &wake_at); /* complete: agreed */
	CHECK(cmd && cmd->first == 0 && cmd->count == 2 && cmd->agreed);
	CHECK(rt->fast && rt->fast_pos == 2);
	CHECK(cmd && !cmd->barrier_voted && cmd->chunk_bytes == rt->set.fusion_chunk_bytes);
	free(cmd);
	agree_drop(rt, 2);
	agree_entry(rt, "a", 3);
	agree_entry(rt, "b", 6); /* a changed count breaks the run: rank 0 negotiates */
	CHECK(agree_next(rt, 0, 0, &wake_at) == NULL);
	struct mail m;
	CHECK(!rt->fast && mailbox_take(&rt->mail, MAIL_TO_CONTROL, &m) && m.kind == MAIL_NEGOTIATE &&
	      m.pos == 2);
	agree_drop(rt, 2);
	rt->fast = 1; /* rank 0 handed back at 4; nothing submitted, but nudged: no */
	rt->fast_pos = 4;
	mailbox_put(&rt->mail, MAIL_NUDGE, 4);
	CHECK(agree_next(rt, 0, 0, &wake_at) == NULL);
	CHECK(!rt->fast && mailbox_take(&rt->mail, MAIL_TO_CONTROL, &m) && m.kind == MAIL_NEGOTIATE &&
	      m.pos == 4);
	pthread_mutex_unlock(&rt->lock);
	agree_runtime_free(rt);
}

/* Who runs a completed repeated bucket: a program that waits right after
 * submitting runs it on its own thread (the engine thread is not woken
 * and, when woken, leaves a fresh run to a waiter for a moment); one that
 * waits late, or submits on, has the engine thread run it at once. */
static void test_agreement_leaves_a_completed_run_to_a_prompt_waiter(void)
{
	struct runtime *rt = agree_runtime();
	double wake_at = 0;
	CHECK(!agree_wants_wake(rt, agree_entry(rt, "a", 3))); /* a run begun at the head */
	CHECK(agree_wants_wake(rt, agree_entry(rt, "b", 5)));  /* completed: nobody waited yet */
	keep_completion_fresh(rt);
	double done_at = rt->run_completed_at;
	CHECK(agree_next(rt, 0, 0, &wake_at) == NULL); /* the engine thread leaves it a moment */
	CHECK(wake_at > done_at && wake_at < done_at + 0.01);
	agree_note_waiter(rt); /* the program waits at once */
	CHECK(rt->waiter_comes && rt->run_completed_at == 0);
	struct exec_cmd *cmd = agree_next(rt, 1, 0, &wake_at);
	CHECK(cmd && cmd->count == 2);
	free(cmd);
	agree_drop(rt, 2);
	agree_entry(rt, "a", 3);
	CHECK(!agree_wants_wake(rt, agree_entry(rt, "b", 5))); /* the waiter will come */
	rt->run_completed_at = runtime_now() - 0.01;
	agree_note_waiter(rt); /* ... but came 10 ms late: the engine thread is woken next time */
	CHECK(!rt->waiter_comes);
	cmd = agree_next(rt, 1, 0, &wake_at);
	free(cmd);
	agree_drop(rt, 2);
	agree_entry(rt, "a", 3);
	CHECK(agree_wants_wake(rt, agree_entry(rt, "b", 5)));
	CHECK(agree_wants_wake(rt, agree_entry(rt, "a", 3))); /* submitting on, waiters late */
	CHECK(rt->run_completed_at == 0);
	cmd = agree_next(rt, 0, 0, &wake_at); /* the engine thread runs the complete one at once */
	CHECK(cmd && cmd->first == 4 && cmd->count == 2);
	free(cmd);
	agree_drop(rt, 2);
	CHECK(agree_wants_wake(rt, agree_entry(rt, "b", 5))); /* completed ... */
	keep_completion_fresh(rt);
	agree_note_waiter(rt);                                 /* ... and waited for at once */
	CHECK(rt->waiter_comes);
	CHECK(!agree_wants_wake(rt, agree_entry(rt, "a", 3)));  /* so the next is left too */
	CHECK(!agree_wants_wake(rt, agree_entry(rt, "b", 5)));
	cmd = agree_next(rt, 1, 0, &wake_at); /* the waiter runs both cached runs as one bucket */
	CHECK(cmd && cmd->first == 6 && cmd->count == 4 && cmd->agreed);
	free(cmd);
	agree_drop(rt, 4);
	rt->set.fusion_threshold_bytes = 40; /* one run is 32 bytes: two exceed it */
	agree_entry(rt, "a", 3);
	agree_entry(rt, "b", 5);
	agree_entry(rt, "a", 3);
	agree_entry(rt, "b", 5);
	cmd = agree_next(rt, 1, 0, &wake_at);
	CHECK(cmd && cmd->first == 10 && cmd->count == 2);
	free(cmd);
	agree_drop(rt, 4);
	agree_runtime_free(rt);
}

static void test_coord_starts_cached_bucket_when_complete(void)
{
	struct plan_cache pc = { 0 };
	struct fusion_item a = item("a", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	struct fusion_item b = item("b", 4, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
	struct fusion_item ab[2] = { a, b };
	plan_cache_learn(&pc, ab, 2);
	struct coord c;
	coord_init(&c, 2, 1 << 20);
	struct coord_exec ex[4];
	char err[512];
	coord_submit(&c, 0, &a, (struct plan_tag){ 0, 0 }, 1.0);
	coord_submit(&c, 0, &b, (struct plan_tag){ 0, 1 }, 1.0);
	coord_submit(&c, 1, &a, (struct plan_tag){ 0, 0 }, 2.0);
	CHECK_NEAR(coord_head_ready_time(&c), 2.0, 0, 0);
	CHECK_INT(coord_plan(&c, &pc, 0, ex, err, sizeof(err)), 0); /* b missing on rank 1 */
	coord_submit(&c, 1, &b, (struct plan_tag){ 0, 1 }, 2.5);
	CHECK_INT(coord_plan(&c, &pc, 0, ex, err, sizeof(err)), 1);
	CHECK(ex[0].first == 0 && ex[0].count == 2 && ex[0].cached == 0 && !ex[0].learn);
	CHECK(ex[0].signature == fusion_signature(ab, 2));
	/* not cached: the trailing bucket waits until flushed, then is learnt */
	coord_submit(&c, 0, &b, NO_TAG, 3.0);
	coord_submit(&c, 1, &b, NO_TAG, 3.0);
	CHECK_INT(coord_plan(&c, &pc, 0, ex, err, sizeof(err)), 0);
	CHECK_INT(coord_plan(&c, &pc, 1, ex, err, sizeof(err)), 1);
	CHECK(ex[0].first == 2 && ex[0].count == 1 && ex[0].cached == -1 && ex[0].learn);
	CHECK_INT((int)pc.nentries, 2);
	/* a rank repeating the cache while another does not: negotiated, and
	 * a real difference is the usual mismatch */
	coord_submit(&c, 0, &a, (struct plan_tag){ 0, 0 }, 4.0);
	coord_submit(&c, 1, &b, NO_TAG, 4.0);
	CHECK_INT(coord_plan(&c, &pc, 1, ex, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: tensor mismatch: 'a' vs 'b'");
	coord_free(&c);
	plan_cache_free(&pc);
}

static void test_coord_many_positions_survive_compaction(void)
{
	struct coord c;
	coord_init(&c, 2, 64);
	struct coord_exec *ex = malloc(1000 * sizeof(*ex));
	char err[256];
	uint64_t next = 0;
	for (int round = 0; round < 50; round++) {
		for (int k = 0; k < 20; k++) {
			char name[32];
			snprintf(name, sizeof(name), "t%d.%d", round, k);
			struct fusion_item it = item(name, 8, HVD_F32, HVD_SUM, FUSION_ALLREDUCE);
			coord_submit(&c, 0, &it, NO_TAG, 0);
			coord_submit(&c, 1, &it, NO_TAG, 0);
		}
		int n = coord_plan(&c, NULL, 1, ex, err, sizeof(err));
		CHECK_INT(n, 10); /* 32-byte tensors, 64-byte threshold */
		for (int b = 0; b < n; b++) {
			CHECK_INT(ex[b].first, next);
			next += ex[b].count;
		}
	}
	CHECK_INT(next, 1000);
	free(ex);
	coord_free(&c);
}

/* ---- dtype ---- */

static void test_half_conversions_round_to_nearest_even(void)
{
	CHECK_INT(dtype_f32_to_f16(1.0f), 0x3c00);
	CHECK_INT(dtype_f32_to_f16(-2.0f), 0xc000);
	CHECK_INT(dtype_f32_to_f16(65504.0f), 0x7bff);
	CHECK_INT(dtype_f32_to_f16(70000.0f), 0x7c00);
	CHECK_INT(dtype_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);        /* tie: even */
	CHECK_INT(dtype_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);        /* tie: even up */
	CHECK_INT(dtype_f32_to_f16(5.9604645e-08f), 0x0001);            /* smallest subnormal */
	CHECK_NEAR(dtype_f16_to_f32(0x0001), 5.9604645e-08, 1e-15, 0);
	CHECK_NEAR(dtype_f16_to_f32(0x3555), 0.33325195, 1e-8, 0);
	CHECK(isnan(dtype_f16_to_f32(dtype_f32_to_f16(NAN))));
	CHECK_INT(dtype_f32_to_bf16(1.0f), 0x3f80);
	CHECK_INT(dtype_f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);         /* tie: even */
	CHECK_INT(dtype_f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);
	CHECK_NEAR(dtype_bf16_to_f32(0x4049), 3.140625, 0, 0);
	for (int i = -2048; i <= 2048; i++)
		CHECK_MSG(dtype_f16_to_f32(dtype_f32_to_f16((float)i)) == (float)i, "f16 %d", i);
	CHECK_INT(dtype_size(HVD_I64), 8);
	CHECK_STR(dtype_name(HVD_BF16), "bfloat16");
}

/* The average's last addition, eight at a time plus a tail, with and
 * without the scale: every element (unaligned start, every tail length)
 * is the one add and one multiply of a plain loop, and nothing around the
 * range is touched. */
static void test_last_addition_is_the_plain_loop_everywhere(void)
{
	float buf[64], want[64], src[64];
	for (int f = 0; f < 2; f++)
		for (size_t start = 0; start < 4; start++)
			for (size_t n = 0; n <= 40; n++) {
				float factor = f ? 1.0f / 3 : 1.0f;
				for (int i = 0; i < 64; i++) {
					buf[i] = want[i] = (float)(i * 7919 % 1009) / 3.0f - 100.0f;
					src[i] = (float)(i * 104729 % 2003) / 7.0f;
				}
				for (size_t i = start; i < start + n; i++)
					want[i] = (want[i] + src[i]) * factor;
				dtype_add_scale_f32(buf + start, buf + start, src + start, n, factor);
				CHECK_MSG(!memcmp(buf, want, sizeof(buf)), "start %zu count %zu", start, n);
			}
}

/* ---- timeline ---- */

static cJSON *parse_file(const char *path)
{
	char *text = test_read_file(path, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL;
	free(text);
	return j;
}

static void test_timeline_is_valid_json_after_every_event(void)
{
	char *path = test_path(test_tmpdir(), "timeline.json");
	struct timeline *t = NULL;
	char err[256];
	CHECK_INT(timeline_open(&t, path, err, sizeof(err)), 0);
	cJSON *j = parse_file(path);
	CHECK(cJSON_IsArray(j));
	cJSON_Delete(j);
	const char *lanes[] = { "grad \"quoted\"\\x", "compute" };
	for (int i = 0; i < 20; i++) {
		const char *lane = lanes[i % 2];
		if (i % 3 == 0)
			timeline_begin(t, lane, "NEGOTIATE_ALLREDUCE");
		else if (i % 3 == 1)
			timeline_tick(t, lane, "1");
		else
			timeline_end(t, lane, "\"dtype\": \"float32\", \"shape\": \"[3]\"");
		j = parse_file(path);
		CHECK_MSG(cJSON_IsArray(j), "not valid JSON after event %d", i);
		cJSON_Delete(j);
	}
	timeline_close(t);
	j = parse_file(path);
	CHECK(cJSON_IsArray(j));
	int names = 0, begins = 0;
	cJSON *ev;
	cJSON_ArrayForEach(ev, j) {
		cJSON *ph = cJSON_GetObjectItem(ev, "ph");
		CHECK(cJSON_IsString(ph));
		CHECK(cJSON_IsNumber(cJSON_GetObjectItem(ev, "pid")));
		if (!strcmp(ph->valuestring, "M") && cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")) {
			names++;
		} else if (!strcmp(ph->valuestring, "B")) {
			begins++;
			CHECK(cJSON_IsNumber(cJSON_GetObjectItem(ev, "ts")));
		}
	}
	CHECK_INT(names, 2);
	CHECK_INT(begins, 7);
	cJSON *first = cJSON_GetArrayItem(j, 0);
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(first, "args"), "start_time_since_epoch_in_micros") != NULL);
	cJSON_Delete(j);
	free(path);
}

static void test_timeline_bad_path_is_an_error(void)
{
	struct timeline *t = NULL;
	char err[256] = "";
	CHECK_INT(timeline_open(&t, "/nonexistent/dir/t.json", err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "hvd: HVD_TIMELINE: '/nonexistent/dir/t.json': ");
	CHECK(t == NULL);
}

/* ---- start-up report ---- */

static struct host_entry host(const char *name, const char *busid, const char *cpus,
			      const char *affinity, int gpus)
{
	struct host_entry h;
	memset(&h, 0, sizeof(h));
	snprintf(h.host, sizeof(h.host), "%s", name);
	snprintf(h.gpu_busid, sizeof(h.gpu_busid), "%s", busid);
	snprintf(h.cpus, sizeof(h.cpus), "%s", cpus);
	snprintf(h.affinity, sizeof(h.affinity), "%s", affinity);
	snprintf(h.bind, sizeof(h.bind), "socket");
	h.gpus_visible = gpus;
	return h;
}

static void test_report_warns_when_rules_break(void)
{
	struct host_entry ok[2] = { host("n1", "0000:3b:00.0", "0-19", "0-19", 2),
				    host("n1", "0000:5e:00.0", "0-19", "0-19", 2) };
	char out[4096];
	CHECK_INT(report_warnings(ok, 2, "mpi", out, sizeof(out)), 0);
	report_format(ok, 2, "mpi", out, sizeof(out));
	CHECK_CONTAINS(out, "2 ranks, backend mpi");
	CHECK_CONTAINS(out, "0000:5e:00.0");
	struct host_entry bad[3] = { host("n1", "0000:3b:00.0", "0-19", "0-19", 2),
				     host("n1", "0000:3b:00.0", "0-19", "20-39", 2),
				     host("n1", "0000:5e:00.0", "", "", 2) };
	bad[2].has_ib = 1;
	bad[2].ib_disabled = 1;
	bad[0].has_ib = 1;
	bad[0].ib_disabled = 1;
	CHECK_INT(report_warnings(bad, 3, "nccl", out, sizeof(out)), 4);
	CHECK_CONTAINS(out, "ranks 0 and 1 share it");
	CHECK_CONTAINS(out, "rank 1 runs on CPUs 20-39");
	CHECK_CONTAINS(out, "'3 ranks, 2 GPUs on n1'");
	CHECK_CONTAINS(out, "NCCL_IB_DISABLE=1 on n1");
}

/* Several nodes: the report counts nodes and shows each rank's; one
 * hostname on two nodes is named once per extra node (OpenMPI's vader
 * segments collide: tests/slurm/multinode.sh). */
static void test_report_across_nodes(void)
{
	struct host_entry h[5] = { host("n1", "", "", "", 0), host("n1", "", "", "", 0),
				   host("n2", "", "", "", 0), host("n2", "", "", "", 0),
				   host("n3", "", "", "", 0) };
	h[2].node_id = h[3].node_id = 1;
	h[4].node_id = 2;
	h[3].local_rank = 1;
	char out[4096];
	report_format(h, 5, "mpi", out, sizeof(out));
	CHECK_CONTAINS(out, "hvd: start-up: 5 ranks, backend mpi, 3 nodes\n");
	CHECK_CONTAINS(out, "  3     n2               1     1      -");
	CHECK_INT(report_warnings(h, 5, "mpi", out, sizeof(out)), 0);
	snprintf(h[2].host, sizeof(h[2].host), "n1");
	snprintf(h[3].host, sizeof(h[3].host), "n1");
	CHECK_INT(report_warnings(h, 5, "mpi", out, sizeof(out)), 1);
	CHECK_CONTAINS(out, "hvd: warning: 'host n1 on nodes 0 and 1': two nodes report one hostname");
}

/* The table says each task's NUMA node (the GPU's, HVD_NUMA) and how many
 * of its CPUs lie on it (an NPS4 node's task split away from its GPU
 * shows 0 of 32). */
static void test_report_names_the_gpus_numa_node(void)
{
	struct host_entry h[2] = { host("n1", "0000:41:00.0", "48-63,176-191", "", 0),
				   host("n1", "0000:01:00.0", "0-31", "", 0) };
	snprintf(h[0].socket, sizeof(h[0].socket), "1");
	snprintf(h[1].socket, sizeof(h[1].socket), "0");
	snprintf(h[0].numa, sizeof(h[0].numa), "3");
	snprintf(h[0].numa_cpus, sizeof(h[0].numa_cpus), "48-63,176-191");
	snprintf(h[1].numa, sizeof(h[1].numa), "1");
	snprintf(h[1].numa_cpus, sizeof(h[1].numa_cpus), "16-31,144-159");
	char out[4096];
	report_format(h, 2, "nccl", out, sizeof(out));
	CHECK_CONTAINS(out, "numa  near-gpu  socket");
	CHECK_CONTAINS(out, "48-63,176-191 3     32/32     1");
	CHECK_CONTAINS(out, "0-31         1     16/32     0");
	h[1].numa_cpus[0] = 0;   /* no sysfs here: unknown, not 0 */
	report_format(h, 2, "nccl", out, sizeof(out));
	CHECK_CONTAINS(out, "0-31         1     -         0");
}

static void test_silent_ranks_named_by_host(void)
{
	struct host_entry h[6] = { host("n1", "", "", "", 0), host("n1", "", "", "", 0),
				   host("n2", "", "", "", 0), host("n2", "", "", "", 0),
				   host("n3", "", "", "", 0), host("n3", "", "", "", 0) };
	char out[256];
	int one[1] = { 3 }, node[2] = { 2, 3 }, mixed[3] = { 2, 3, 5 }, bad[1] = { 9 };
	report_name_ranks(h, 6, one, 1, out, sizeof(out));
	CHECK_STR(out, "rank 3 (host n2)");
	report_name_ranks(h, 6, node, 2, out, sizeof(out));
	CHECK_STR(out, "ranks 2,3 (host n2)");
	report_name_ranks(h, 6, mixed, 3, out, sizeof(out));
	CHECK_STR(out, "ranks 2,3 (host n2), rank 5 (host n3)");
	report_name_ranks(h, 6, bad, 1, out, sizeof(out));
	CHECK_STR(out, "rank 9 (host ?)");
	report_name_ranks(h, 6, mixed, 3, out, 12);   /* cut short, still terminated */
	CHECK_INT((long long)strlen(out), 11);
}

/* ---- the engine <-> control mailbox ---- */

static void test_mailbox_keeps_order_and_one_mail_per_kind(void)
{
	struct mailbox b = { 0 };
	struct mail m;
	mailbox_put(&b, MAIL_NEGOTIATE, 5);
	mailbox_put(&b, MAIL_NUDGE, 6);
	mailbox_put(&b, MAIL_WAITING, 7);
	mailbox_put(&b, MAIL_NEGOTIATE, 9); /* replaces 5 where it stands */
	for (int k = 0; k < 100; k++)       /* never full: one per kind */
		mailbox_put(&b, MAIL_WAITING, 7 + (uint64_t)k % 2);
	CHECK_INT(b.n, 3);
	CHECK(mailbox_has(&b, MAIL_NUDGE, 6) && !mailbox_has(&b, MAIL_NUDGE, 5));
	CHECK(mailbox_take(&b, MAIL_TO_CONTROL, &m) && m.kind == MAIL_NEGOTIATE && m.pos == 9);
	CHECK(mailbox_take(&b, MAIL_TO_CONTROL, &m) && m.kind == MAIL_WAITING && m.pos == 8);
	CHECK(!mailbox_take(&b, MAIL_TO_CONTROL, &m));
	CHECK(mailbox_has(&b, MAIL_NUDGE, 6)); /* the engine's stays */
	CHECK(mailbox_take(&b, MAIL_NUDGE, &m) && m.pos == 6 && b.n == 0);
}

static void *wait_for_work(void *arg)
{
	struct runtime *rt = arg;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&rt->lock);
	rt->engine_busy = 1; /* "I am waiting" */
	pthread_cond_broadcast(&rt->cond);
	int rc = 0;
	while (!mailbox_has(&rt->mail, MAIL_NUDGE, 3) && rc == 0)
		rc = pthread_cond_timedwait(&rt->work, &rt->lock, &ts);
	pthread_mutex_unlock(&rt->lock);
	return (void *)(intptr_t)rc;
}

/* A nudge wakes a thread waiting for the engine's work; a request for
 * the control thread writes one byte into its wake-up pipe, however
 * many are posted before it drains the pipe. */
static void test_mailbox_posts_wake_their_reader(void)
{
	struct runtime *rt = agree_runtime();
	pthread_t t;
	CHECK_INT(pthread_create(&t, NULL, wait_for_work, rt), 0);
	pthread_mutex_lock(&rt->lock);
	while (!rt->engine_busy)
		pthread_cond_wait(&rt->cond, &rt->lock);
	runtime_post(rt, MAIL_NUDGE, 3);
	pthread_mutex_unlock(&rt->lock);
	void *rc = NULL;
	pthread_join(t, &rc);
	CHECK_MSG(rc == NULL, "the waiter was not woken (%d)", (int)(intptr_t)rc);
	static char ctl; /* state.c only asks whether a control plane is there */
	rt->ctl = (struct control *)(void *)&ctl;
	CHECK_INT(pipe(rt->ctl_wake), 0);
	pthread_mutex_lock(&rt->lock);
	runtime_post(rt, MAIL_NEGOTIATE, 4);
	runtime_post(rt, MAIL_WAITING, 5);
	pthread_mutex_unlock(&rt->lock);
	char buf[8];
	fcntl(rt->ctl_wake[0], F_SETFL, O_NONBLOCK);
	CHECK_INT(read(rt->ctl_wake[0], buf, sizeof(buf)), 1);
	close(rt->ctl_wake[0]);
	close(rt->ctl_wake[1]);
	rt->ctl = NULL;
	agree_runtime_free(rt);
}

/* A data wait past its deadline goes on while the control plane may still
 * name a peer it sees going silent (found by the stress mode: a stopped
 * rank's NCCL peer blamed its own copy instead of naming the rank). */
static void test_a_wait_waits_for_a_silent_peer_to_be_named(void)
{
	volatile int aborted = 0;
	volatile double naming_until = runtime_now() + 60;
	char err[64];
	struct comm_wait w = { .deadline = runtime_now() - 1, .abort = &aborted,
			       .naming_until = &naming_until, .what = "t", .err = err,
			       .errlen = sizeof(err) };
	CHECK_INT(comm_wait_check(&w, NULL), 0);
	naming_until = runtime_now() - 0.5;   /* the peer was named, or came back */
	CHECK_INT(comm_wait_check(&w, NULL), HVD_ERR_COMM);
	naming_until = 0;
	CHECK_INT(comm_wait_check(&w, NULL), HVD_ERR_COMM);
	w.naming_until = NULL;
	CHECK_INT(comm_wait_check(&w, NULL), HVD_ERR_COMM);
	aborted = 1;
	CHECK_INT(comm_wait_check(&w, NULL), HVD_ERR_ABORTED);
	w.deadline = runtime_now() + 60;
	aborted = 0;
	CHECK_INT(comm_wait_check(&w, NULL), 0);
}

/* A list's entries are whole: 10.0.0.1 is not listed inside 10.0.0.11
 * (control.c used strstr, so a host whose first address was 10.0.0.11
 * never published 10.0.0.1), nor 10.0.0.11 inside 10.0.0.1; what does not
 * fit is not appended. */
static void test_csv_list_entries_are_whole(void)
{
	char out[32] = "";
	CHECK_INT(csv_append(out, sizeof(out), "10.0.0.11"), 1);
	CHECK_INT(csv_append(out, sizeof(out), "10.0.0.1"), 1);
	CHECK_INT(csv_append(out, sizeof(out), "10.0.0.1"), 0);
	CHECK_INT(csv_append(out, sizeof(out), "0.0.1"), 1);
	CHECK_STR(out, "10.0.0.11,10.0.0.1,0.0.1");
	CHECK_INT(csv_listed("10.0.0.1", "10.0.0.11", 9), 0);
	CHECK_INT(csv_listed("a,10.0.0.11,b", "10.0.0.1", 8), 0);
	CHECK_INT(csv_append(out, sizeof(out), "192.168.100.100"), 0);  /* 24 + 1 + 15 + 1 > 32 */
	CHECK_STR(out, "10.0.0.11,10.0.0.1,0.0.1");
}

/* A bridge with one address on every node (docker0) is named; an address
 * two ranks of one host list, a prefix of another address, and an
 * address of one host only are not. */
static void test_addresses_several_hosts_have_are_named(void)
{
	struct iface_row rows[] = {
		{ "n1", "172.17.0.1,10.0.0.1,192.168.122.1" }, { "n1", "172.17.0.1,10.0.0.1,192.168.122.1" },
		{ "n2", "10.0.0.2,172.17.0.1,11.0.0.1" }, { "h4", "1.0.0.1,172.17.0.1,192.168.122.1" },
	};
	char out[256];
	CHECK_INT(iface_shared(rows, 4, out, sizeof(out)), 2);
	CHECK_STR(out, "172.17.0.1,192.168.122.1");
	CHECK_INT(iface_shared(rows, 2, out, sizeof(out)), 0);  /* one host */
	CHECK_STR(out, "");
	CHECK_INT(iface_shared(rows, 4, out, 16), 1);           /* what fits */
	CHECK_STR(out, "172.17.0.1");
	char mine[256], names[64];
	iface_walk(NULL, mine, sizeof(mine));
	CHECK_MSG(!strstr(mine, "127.0.0.1"), "loopback listed: %s", mine);
	iface_walk(mine, names, sizeof(names));        /* every one of them */
	CHECK_MSG(!mine[0] == !names[0] && !strstr(names, "lo,") && strcmp(names, "lo"),
		  "addresses %s: interfaces '%s'", mine, names);
	iface_walk("198.51.100.77", names, sizeof(names));  /* TEST-NET-2: none */
	CHECK_STR(names, "");
}

const struct test_case runtime_unit_tests[] = {
	{ "csv_list_entries_are_whole", test_csv_list_entries_are_whole },
	{ "addresses_several_hosts_have_are_named", test_addresses_several_hosts_have_are_named },
	{ "a_wait_waits_for_a_silent_peer_to_be_named", test_a_wait_waits_for_a_silent_peer_to_be_named },
	{ "report_across_nodes", test_report_across_nodes },
	{ "report_names_the_gpus_numa_node", test_report_names_the_gpus_numa_node },
	{ "silent_ranks_named_by_host", test_silent_ranks_named_by_host },
	{ "settings_defaults_match_horovod", test_settings_defaults_match_horovod },
	{ "settings_every_variable_parses", test_settings_every_variable_parses },
	{ "settings_bad_values_name_the_variable", test_settings_bad_values_name_the_variable },
	{ "settings_other_tools_variables_pass", test_settings_other_tools_variables_pass },
	{ "settings_cross_checks", test_settings_cross_checks },
	{ "settings_describe_lists_what_is_set", test_settings_describe_lists_what_is_set },
	{ "compute_threads_subtract_loader", test_compute_threads_subtract_loader },
	{ "launch_decision_from_environment", test_launch_decision_from_environment },
	{ "fusion_plan_respects_threshold", test_fusion_plan_respects_threshold },
	{ "fusion_plan_splits_on_dtype_op_and_kind", test_fusion_plan_splits_on_dtype_op_and_kind },
	{ "signature_sees_names_counts_dtypes", test_signature_sees_names_counts_dtypes },
	{ "coord_plans_only_what_every_rank_submitted", test_coord_plans_only_what_every_rank_submitted },
	{ "coord_mismatch_names_tensors_and_ranks", test_coord_mismatch_names_tensors_and_ranks },
	{ "coord_many_positions_survive_compaction", test_coord_many_positions_survive_compaction },
	{ "plan_cache_follows_a_repeated_sequence", test_plan_cache_follows_a_repeated_sequence },
	{ "coord_starts_cached_bucket_when_complete", test_coord_starts_cached_bucket_when_complete },
	{ "agreement_votes_on_a_repeated_bucket", test_agreement_votes_on_a_repeated_bucket },
	{ "mailbox_keeps_order_and_one_mail_per_kind", test_mailbox_keeps_order_and_one_mail_per_kind },
	{ "mailbox_posts_wake_their_reader", test_mailbox_posts_wake_their_reader },
	{ "agreement_leaves_a_completed_run_to_a_prompt_waiter",
	  test_agreement_leaves_a_completed_run_to_a_prompt_waiter },
	{ "half_conversions_round_to_nearest_even", test_half_conversions_round_to_nearest_even },
	{ "last_addition_is_the_plain_loop_everywhere", test_last_addition_is_the_plain_loop_everywhere },
	{ "timeline_is_valid_json_after_every_event", test_timeline_is_valid_json_after_every_event },
	{ "timeline_bad_path_is_an_error", test_timeline_bad_path_is_an_error },
	{ "report_warns_when_rules_break", test_report_warns_when_rules_break },
	{ 0 }
};
