/* test_multinode_train.c - distributed `chexnet train` across the nodes of
 * the multi-node cluster: `srun -N 2 --ntasks-per-node=2 --hvd` on
 * generated data (chexnet synth + pack) ends with the same learnable
 * parameters as the one-node 4-rank run (`-N 1 --ntasks-per-node=4`, each
 * node declares 4 CPUs) within |a-b| <= 1e-5 * max(1,|b|) (SGD, cpu
 * backend, same seed) and the same test AUROC table to 3 decimals; a
 * 2-rank run must fail the same check. Training through a 4-second network
 * cut of n2 ends with the uncut run's parameters; a cut for good is named
 * by the runtime on n1, which ends the step (hvd_abort_job) long before
 * Slurm would declare n2 failed, and the last checkpoint loads afterwards.
 * And the multi-node sbatch example in etc/sbatch matches the real CLI and
 * its #SBATCH lines are accepted.
 * What it does not do: learning quality (slurm-e2e-learning) or failures
 * (test_multinode_runtime.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_compare.h"
#include "multinode_sh.h"
#include "runner.h"
#include "train/safetensors.h"

#define TRAIN_ARGS "--size 64 --threads 1 --optimizer sgd --lr 0.001 --steps 5 --batch 4 " \
	"--seed 7 --progress-every 100 --test"

static int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static long field_of(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int sh(const char *cmd, int timeout_s, struct test_proc *p)
{
	int rc = test_run(cmd, timeout_s, p);
	if (rc != 0)
		test_fail_at(__FILE__, __LINE__, "could not run: %s", cmd);
	return rc;
}

/* tmpdir/chexnet and NIH-layout generated images packed in tmpdir/shards. */
static int make_data(void)
{
	char cmd[2048];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && cp '%s/chexnet' chexnet && ./chexnet synth --out nih --count 200 --size 128 "
		 "--seed 3 && ./chexnet pack --data nih --out shards --size 72", test_tmpdir(),
		 test_build_dir());
	if (sh(cmd, 120, &p))
		return -1;
	int rc = p.exit_code;
	CHECK_MSG(rc == 0, "synth + pack: exit %d: %.600s", rc, p.err);
	test_proc_free(&p);
	return rc == 0 ? 0 : -1;
}

/* `srun LAYOUT --hvd ./chexnet train --data shards TRAIN_ARGS --out OUT`;
 * stdout (the AUROC table) in OUT.table. */
static int train(const char *layout, const char *out, struct test_proc *p)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd '%s' && srun %s --hvd ./chexnet train --data shards " TRAIN_ARGS
		 " --out %s > %s.table", test_tmpdir(), layout, out, out);
	if (sh(cmd, 150, p))
		return -1;
	CHECK_MSG(p->exit_code == 0, "srun %s chexnet train: exit %d: %.900s", layout, p->exit_code, p->err);
	return p->exit_code == 0 ? 0 : -1;
}

/* The AUROC table (stdout of rank 0): every class row and the mean, each
 * value rounded to 3 decimals, as "Name=0.123;..." */
static char *auroc_rows(const char *out)
{
	char path[1024], name[64], *rows = calloc(1, 4096);
	snprintf(path, sizeof(path), "%s/%s.table", test_tmpdir(), out);
	char *text = test_read_file(path, NULL);
	size_t used = 0;
	for (char *line = text ? strtok(text, "\n") : NULL; rows && line; line = strtok(NULL, "\n")) {
		double v;
		if (sscanf(line, "%63s %lf", name, &v) == 2 && used < 4000)
			used += (size_t)snprintf(rows + used, 4096 - used, "%s=%.3f;", name, v);
	}
	free(text);
	return rows;
}

static void test_two_nodes_equal_one_node_four_ranks(void)
{
	struct test_proc p;
	if (make_data())
		return;
	if (train("-N 2 -w n1,n2 --ntasks-per-node=2", "multi", &p))
		return;
	CHECK_CONTAINS(p.err, "hvd: start-up: 4 ranks, backend mpi, 2 nodes");
	CHECK_CONTAINS(p.err, "chexnet: overall: ");
	test_proc_free(&p);
	if (train("-N 1 -w n1 --ntasks-per-node=4", "single", &p))
		return;
	CHECK_CONTAINS(p.err, "hvd: start-up: 4 ranks, backend mpi, 1 node");
	test_proc_free(&p);
	if (train("-N 2 -w n1,n2 --ntasks-per-node=1", "two", &p))   /* other micro-batches per step */
		return;
	test_proc_free(&p);
	double same = ckpt_max_rel_diff("multi", "single"), other = ckpt_max_rel_diff("two", "single");
	CHECK_MSG(same >= 0 && same <= 1e-5, "2 nodes x 2 vs 1 node x 4: max |a-b|/max(1,|b|) = %.3g", same);
	CHECK_MSG(other > 1e-5, "2 ranks vs 4 ranks differ by only %.3g: the check cannot tell runs "
		  "apart", other);
	char *a = auroc_rows("multi"), *b = auroc_rows("single");
	CHECK_MSG(a && b && strstr(a, "mean=") && !strcmp(a, b), "AUROC tables differ:\n%s\n%s", a, b);
	printf("  measured: max relative parameter difference %.3g (2-rank control %.3g); %s\n", same,
	       other, a && strstr(a, "mean=") ? strstr(a, "mean=") : "?");
	free(a);
	free(b);
}

static const char *node_cmd(char *buf, size_t len, const char *verb)
{
	snprintf(buf, len, "'%s/tests/slurm/multinode.sh' %s '%s' n2", test_src_dir(), verb,
		 test_cluster_dir());
	return buf;
}

/* On idle nodes (plain `idle`: `sinfo -t idle` also lists idle+completing
 * ones), background `ENV srun -N2 x 2 --hvd tmpdir/chexnet train --data
 * shards ARGS` (stderr in err.txt); once stderr shows WAIT_FOR (and a
 * checkpoint, if CHECKPOINT), runs ACTION; waits for srun, runs AFTER,
 * waits for idle nodes. Prints rc=, left= (processes of the copy), idle=.
 * A run still going without WAIT_FOR after 90 s is cancelled, ACTION is
 * not run, and the case fails (returns -1, p freed). WAIT_FOR NULL:
 * ACTION runs at once. */
static int train_with(const char *env, const char *args, const char *wait_for, int checkpoint,
		      const char *action, const char *after, int timeout_s, struct test_proc *p)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && (" MN_IDLE_SH "wait_idle 900; "
		 ": > err.txt; "
		 "env %s srun " MN_LATE_JOB " -N 2 -w n1,n2 --ntasks-per-node=2 --hvd '%s/chexnet' train "
		 "--data shards %s 2> err.txt & s=$!; "
		 "ready() { [ -z '%s' ] || grep -q '%s' err.txt && { [ %d = 0 ] || "
		 "[ -f ck/last/model.safetensors ]; }; }; "
		 "for i in $(seq 900); do ready && break; kill -0 $s 2> /dev/null || break; sleep 0.1; done; "
		 "if ! ready && kill -0 $s 2> /dev/null; then " MN_CANCEL_LATE_SH "fi; "
		 "ready && { %s; }; wait $s; rc=$?; %s; cat err.txt >&2; wait_idle 900; "
		 "sleep 1; echo left=$(pgrep -fc '^%s/chexnet train'); echo rc=$rc; "
		 "echo idle=$(idle)/$n; sinfo -h -N -o '%%N:%%T'; squeue)",
		 test_tmpdir(), env, test_tmpdir(), args, wait_for ? wait_for : "",
		 wait_for ? wait_for : "", checkpoint, action, after, test_tmpdir());
	if (sh(cmd, timeout_s, p))
		return -1;
	CHECK_MSG(!strstr(p->out, "not_started=1"), "srun showed no '%s' within 90 s; nothing was "
		  "done to it: %.1500s ...%s", wait_for, p->out, test_tail(p->err, 1500));
	if (!strstr(p->out, "not_started=1"))
		return 0;
	test_proc_free(p);
	return -1;
}

#define CUT_ARGS "--size 64 --threads 1 --optimizer sgd --lr 0.001 --batch 4 --seed 7 " \
	"--epochs 2 --progress-every 1"

/* A 4-second cut of n2 (ranks 2, 3) during training, shorter than
 * HVD_TIMEOUT_S=15: training goes on and ends with exactly the parameters
 * of the same run without a cut. */
static void test_training_survives_a_short_cut(void)
{
	struct test_proc p;
	char action[2048], cut[1024], restore[1024];
	if (make_data() || train_with("HVD_TIMEOUT_S=15", CUT_ARGS " --out uncut", NULL, 0, ":", ":", 150, &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 0, "uncut: %s %.900s", p.out, p.err);
	int steps = count_of(p.err, " step ");
	test_proc_free(&p);
	snprintf(action, sizeof(action), "%s; sleep 4; echo at_restore=$(grep -c ' step ' err.txt); %s",
		 node_cmd(cut, sizeof(cut), "cut"), node_cmd(restore, sizeof(restore), "restore"));
	if (train_with("HVD_TIMEOUT_S=15", CUT_ARGS " --out cut", "step 3/", 0, action, ":", 150, &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 0, "cut: %s %.900s", p.out, p.err);
	long at_restore = field_of(p.out, "at_restore=");
	CHECK_MSG(at_restore >= 3 && at_restore < steps, "%ld of %d progress lines when the link came "
		  "back: the cut did not fall inside training", at_restore, steps);
	CHECK_MSG(strstr(p.err, "hvd: rank") == NULL && strstr(p.err, "hvd: ranks") == NULL &&
		  strstr(p.err, "Node failure") == NULL, "%.900s", p.err);
	CHECK_CONTAINS(p.out, "idle=4/4");
	double d = ckpt_max_rel_diff("cut", "uncut");
	CHECK_MSG(d == 0, "cut vs uncut training: max relative parameter difference %.3g", d);
	printf("  measured: %d progress lines, %ld done when a 4 s cut of n2 ended; parameters "
	       "identical to the uncut run\n", steps, at_restore);
	test_proc_free(&p);
}

/* n2 cut for good during training (checkpoints every 2 steps): the ranks
 * on n1 name ranks 2,3 on n2 after HVD_TIMEOUT_S=8 and end the step
 * (chexnet calls hvd_abort_job after a failure, trainer/cmd/main.c), so srun
 * returns KillWait (5 s) + about 2 s after the runtime named them, long
 * before Slurm would declare n2 failed (about 30 s after the cut at
 * SlurmdTimeout=20; srun then reports `Node failure on n2`); after the
 * link is back the last checkpoint evaluates. Prints cut_to_end= and
 * named_to_end= (ms from the cut / from the first naming line in srun's
 * stderr to the end of srun). */
static void test_training_cut_for_good_keeps_the_checkpoint(void)
{
	struct test_proc p;
	char cmd[2048], cut[1024], restore[1024], action[2048];
	if (make_data())
		return;
	/* a watcher stamps the first naming line while srun runs */
	snprintf(action, sizeof(action), "%s; t0=$(date +%%s%%N); (for i in $(seq 1200); do "
		 "grep -q \"'silent for \" err.txt && break; sleep 0.05; done; date +%%s%%N > named.t) "
		 "> /dev/null 2>&1 & w=$!", node_cmd(cut, sizeof(cut), "cut"));
	/* restore as soon as srun has ended: the step was aborted, Slurm only
	 * has to reach n2 to kill its orphaned ranks (n2 plainly idle again
	 * 3.5 s later, measured). Waiting for Slurm to set n2 down first, as
	 * before chexnet aborted, costs 50 s more: down at 31 s, idle at 81 s. */
	char after[1600];
	snprintf(after, sizeof(after), "t2=$(date +%%s%%N); sleep 0.2; kill $w 2> /dev/null; "
		 "echo cut_to_end=$(( (t2 - t0) / 1000000 )); [ -f named.t ] && "
		 "echo named_to_end=$(( (t2 - $(cat named.t)) / 1000000 )); %s",
		 node_cmd(restore, sizeof(restore), "restore"));
	if (train_with("HVD_TIMEOUT_S=8", CUT_ARGS " --epochs 100 --save-every 2 --out ck", "step 4/", 1,
		       action, after, 200, &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") > 0, "srun exit status: %s", p.out);
	CHECK_MSG(count_of(p.err, "hvd: ranks 2,3 (host n2): 'silent for ") == 2,
		  "ranks 0 and 1 on n1 name ranks 2,3 on n2: ...%s", test_tail(p.err, 2000));
	CHECK_MSG(strstr(p.err, "Node failure") == NULL, "Slurm saw the node fail first: %.1200s", p.err);
	CHECK_CONTAINS(p.err, "srun: Job step aborted");   /* hvd_abort_job */
	long named_ms = field_of(p.out, "named_to_end="), cut_ms = field_of(p.out, "cut_to_end=");
	CHECK_MSG(named_ms >= 0 && named_ms < 10000, "srun ended %ld ms after the runtime named n2 "
		  "(KillWait 5 s + about 2 s)", named_ms);
	CHECK_MSG(cut_ms >= 7500 && cut_ms < 20000, "srun ended %ld ms after the cut (HVD_TIMEOUT_S=8; "
		  "Slurm alone: about 30000)", cut_ms);
	printf("  measured: srun ended %ld ms after the cut of n2, %ld ms after the runtime named it "
	       "(HVD_TIMEOUT_S=8, rc %ld)\n", cut_ms, named_ms, field_of(p.out, "rc="));
	CHECK_MSG(field_of(p.out, "left=") == 0, "processes left: %s", p.out);
	CHECK_CONTAINS(p.out, "idle=4/4");
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && ./chexnet eval --checkpoint ck/last --data shards "
		 "--size 64 --batch 8 --split val", test_tmpdir());
	if (sh(cmd, 60, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "eval of ck/last after the cut: exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.out, "mean");
	test_proc_free(&p);
}

/* etc/sbatch/chexnet-multinode.sbatch: every option it gives chexnet train
 * exists, and Slurm accepts its #SBATCH lines (--hvd included) when sized
 * down to this cluster on the command line. */
static void test_sbatch_example_matches_the_cli(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "f='%s/etc/sbatch/chexnet-multinode.sbatch'; bash -n \"$f\" || exit 1; "
		 "help=$('%s/chexnet' train --help 2>&1); "
		 "opts=$(sed -n '/chexnet train/,/[^\\\\]$/p' \"$f\" | grep -oE -- '--[a-z-]+' | sort -u); "
		 "[ -n \"$opts\" ] || { echo 'no chexnet train line'; exit 1; }; "
		 "for o in $opts; do echo \"$help\" | grep -qE -- \"^  $o \" || echo \"unknown option $o\"; done; "
		 "grep -q '^#SBATCH --hvd' \"$f\" || echo 'no #SBATCH --hvd'; "
		 "cd '%s' && sbatch --test-only -N 2 --ntasks-per-node=2 --gres=gpu:2 --cpus-per-task=1 "
		 "--time=5 \"$f\" 2>&1",
		 test_src_dir(), test_build_dir(), test_tmpdir());
	if (sh(cmd, 60, &p))
		return;
	CHECK_MSG(p.exit_code == 0, "exit %d: %s %s", p.exit_code, p.out, p.err);
	CHECK_MSG(!strstr(p.out, "unknown option") && !strstr(p.out, "no "), "%s", p.out);
	CHECK_CONTAINS(p.out, "to start at");
	test_proc_free(&p);
}

const struct test_case multinode_train_tests[] = {
	{ "two_nodes_equal_one_node_four_ranks", test_two_nodes_equal_one_node_four_ranks },
	{ "training_survives_a_short_cut", test_training_survives_a_short_cut },
	{ "training_cut_for_good_keeps_the_checkpoint", test_training_cut_for_good_keeps_the_checkpoint },
	{ "sbatch_example_matches_the_cli", test_sbatch_example_matches_the_cli },
	{ 0 }
};
