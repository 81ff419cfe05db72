/* test_train_dist.c - the distributed training loop's parts that need no
 * cluster: grad_sync's accumulation (one-rank world: no collectives), the
 * new train options' strictness, weighted loss on packed data, and stop on
 * SIGTERM (exit 75) + --resume giving the parameters of an uninterrupted
 * run, standalone; a stop signal between two sessions of one run kept for
 * the next; which exits end a multi-rank step (dist.h).
 * What this does not do: run several ranks (slurm-e2e).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "train/dist.h"
#include "train/grad_sync.h"
#include "model/model.h"
#include "runner.h"
#include "train/safetensors.h"
#include "train/stop_signal.h"

static void chexnet(const char *args, int timeout_s, struct test_proc *p)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' %s", test_tmpdir(), test_build_dir(), args);
	if (test_run(cmd, timeout_s, p))
		test_fail_at(__FILE__, __LINE__, "could not run: %s", cmd);
}

/* Every layer's range reported in backward order, as a backend does. */
static void report_all(struct grad_sync *g, const struct model *m)
{
	for (int i = m->desc.layer_count - 1; i >= 0; i--) {
		const struct model_layer *l = &m->desc.layers[i];
		if (l->weight_count + l->bias_count)
			grad_sync_ready(l->weight_offset, l->weight_count + l->bias_count, g);
	}
}

static void test_accumulate_three_gives_the_mean(void)
{
	struct model_desc d;
	struct model m;
	struct grad_sync g;
	struct trainer_error err = { "" };
	CHECK(model_by_name(&d, "densenet121", 32, 14, &err) == 0);
	if (model_create(&m, &d, &err))
		SKIP("model: %s", err.msg);
	size_t n = m.desc.param_count;
	CHECK(grad_sync_init(&g, &m, 3) == 0);
	for (int k = 0; k < 3; k++) {   /* micro-batch k: grads = (k + 1) * x_i */
		for (size_t i = 0; i < n; i++)
			m.grads[i] = (float)(k + 1) * (float)(i % 97) * 0.25f;
		grad_sync_begin_micro(&g, k);
		report_all(&g, &m);
	}
	CHECK(grad_sync_finish(&g) == 0);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += m.grads[i] != 2.0f * (float)(i % 97) * 0.25f;
	CHECK_MSG(bad == 0, "%zu of %zu gradients are not the mean of 3 micro-batches", bad, n);
	/* K = 1: the gradients pass through untouched */
	grad_sync_free(&g);
	CHECK(grad_sync_init(&g, &m, 1) == 0);
	for (size_t i = 0; i < n; i++)
		m.grads[i] = (float)i;
	grad_sync_begin_micro(&g, 0);
	report_all(&g, &m);
	CHECK(grad_sync_finish(&g) == 0);
	CHECK(m.grads[n - 1] == (float)(n - 1) && m.grads[12345] == 12345.0f);
	grad_sync_free(&g);
	model_destroy(&m);
}

static void test_new_options_are_strict(void)
{
	struct test_proc p;
	chexnet("train --synthetic --accumulate 0", 10, &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--accumulate");
	test_proc_free(&p);
	chexnet("train --synthetic --save-every 2x", 10, &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--save-every");
	test_proc_free(&p);
	chexnet("train --synthetic --world-size 2", 10, &p);   /* the runtime knows it */
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "'--world-size': unknown option");
	test_proc_free(&p);
	chexnet("train --synthetic --init a.safetensors --resume run", 10, &p);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "chexnet: train: --init and --resume: give one");
	test_proc_free(&p);
	chexnet("train --synthetic --size 32 --batch 2 --resume nowhere", 60, &p);
	CHECK_INT(p.exit_code, 2);   /* before start-up, as every usage error */
	CHECK_CONTAINS(p.err, "nowhere/last");
	test_proc_free(&p);
}

static void test_weighted_loss_on_packed_data(void)
{
	struct test_proc p;
	chexnet("synth --out nih --count 80 --size 64 --seed 2", 60, &p);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	chexnet("pack --data nih --out shards --size 36", 60, &p);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	chexnet("train --data shards --size 32 --batch 4 --steps 2 --threads 1 --progress-every 1", 120, &p);
	CHECK_MSG(p.exit_code == 0, "exit %d: %.600s", p.exit_code, p.err);
	CHECK(!strstr(p.err, "class counts need"));
	CHECK_CONTAINS(p.err, "step 2/");
	test_proc_free(&p);
}

static int same_learnable(const char *a_dir, const char *b_dir)
{
	char a_path[1024], b_path[1024];
	struct st_file a, b;
	struct trainer_error err = { "" };
	snprintf(a_path, sizeof(a_path), "%s/%s/last/model.safetensors", test_tmpdir(), a_dir);
	snprintf(b_path, sizeof(b_path), "%s/%s/last/model.safetensors", test_tmpdir(), b_dir);
	if (st_read(a_path, &a, &err))
		return test_fail_at(__FILE__, __LINE__, "%s", err.msg), 0;
	if (st_read(b_path, &b, &err))
		return st_free(&a), test_fail_at(__FILE__, __LINE__, "%s", err.msg), 0;
	int same = a.count == b.count && a.count > 300, compared = 0;
	for (int i = 0; same && i < a.count; i++) {
		if (strstr(a.tensors[i].name, "running_") || strcmp(a.tensors[i].dtype, "F32"))
			continue;
		const struct st_tensor *t = st_find(&b, a.tensors[i].name);
		same = t && t->bytes == a.tensors[i].bytes &&
		       memcmp(t->data, a.tensors[i].data, t->bytes) == 0;
		compared++;
	}
	st_free(&a);
	st_free(&b);
	return same && compared > 300;
}

#define RUN "train --synthetic --synthetic-images 96 --size 32 --batch 4 --threads 1 " \
	"--optimizer sgd --lr 0.05 --epochs 2"

static void test_sigterm_checkpoints_exits_75_and_resume_is_exact(void)
{
	char cmd[2048];
	struct test_proc p;
	chexnet(RUN " --quiet --out whole", 120, &p);
	CHECK_MSG(p.exit_code == 0, "uninterrupted: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && ('%s/chexnet' " RUN " --progress-every 1 --out cut "
		 "2> err.txt & c=$!; for i in $(seq 600); do grep -q 'step 3/' err.txt && break; "
		 "sleep 0.05; done; kill -TERM $c; wait $c; echo rc=$?; cat err.txt >&2)",
		 test_tmpdir(), test_build_dir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_CONTAINS(p.out, "rc=75");
	CHECK_CONTAINS(p.err, "chexnet: SIGTERM: stopped at epoch 1 step ");
	test_proc_free(&p);
	chexnet(RUN " --progress-every 100 --out cut --resume cut", 120, &p);
	CHECK_MSG(p.exit_code == 0, "resumed: exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "chexnet: resuming from ");
	test_proc_free(&p);
	CHECK_MSG(same_learnable("cut", "whole"), "stopped + resumed differs from uninterrupted");
}

/* dist.h's rule for a command's end: in a world of several ranks every
 * exit but 0 and 75 (a stop all ranks agreed on) ends the whole step; one
 * rank ends only its process. */
/* Between two sessions of one run (a lost peer, the ranks left going on
 * in the same process) the stop signals keep their handlers: a SIGTERM
 * that comes while the next session starts (its signals blocked until its
 * loop listens) is not the default's death but a stop request the next
 * session's loop sees. Run in a child: it would kill the runner. */
static void test_a_stop_between_sessions_is_kept(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (stop_signal_install(1))
			_exit(2);
		stop_signal_listen();      /* session 1's loop */
		stop_signal_hold();        /* session 2 starting: its threads not yet there */
		raise(SIGTERM);
		int early = stop_signal_received();
		stop_signal_listen();      /* session 2's loop */
		int got = stop_signal_received();
		stop_signal_uninstall();
		_exit(early == 0 && got == SIGTERM ? 0 : 3);
	}
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child %s %d", WIFEXITED(st) ? "exited"
		  : "was killed by signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static void test_failed_exits_end_a_multi_rank_step(void)
{
	CHECK(dist_status_ends_step(1, 2));
	CHECK(dist_status_ends_step(1, 64));
	CHECK(dist_status_ends_step(2, 2));
	CHECK(!dist_status_ends_step(0, 2));
	CHECK(!dist_status_ends_step(CHEXNET_EXIT_PREEMPTED, 2));
	CHECK(!dist_status_ends_step(1, 1));
	CHECK(!dist_status_ends_step(0, 1));
}

const struct test_case train_dist_tests[] = {
	{ "accumulate_three_gives_the_mean", test_accumulate_three_gives_the_mean },
	{ "new_options_are_strict", test_new_options_are_strict },
	{ "weighted_loss_on_packed_data", test_weighted_loss_on_packed_data },
	{ "sigterm_checkpoints_exits_75_and_resume_is_exact",
	  test_sigterm_checkpoints_exits_75_and_resume_is_exact },
	{ "a_stop_between_sessions_is_kept", test_a_stop_between_sessions_is_kept },
	{ "failed_exits_end_a_multi_rank_step", test_failed_exits_end_a_multi_rank_step },
	{ 0 }
};
