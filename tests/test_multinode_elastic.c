/* test_multinode_elastic.c - a run that loses a node goes on in its own
 * allocation: etc/sbatch/chexnet-elastic.sbatch (contrib/chexnet-elastic
 * around `chexnet train`) submitted with `sbatch --wait` to the multi-node
 * cluster, on generated data (64 px, batch 4, SGD, one epoch of 6
 * steps), HVD_TIMEOUT_S=4. At step 3 one node fails for good
 * (multinode.sh fail: its link goes down, then slurmd, slurmstepd and its
 * ranks get SIGKILL), or one rank is stopped (SIGSTOP). The ranks left
 * write OUT/last. A whole node lost: they go on in their own processes
 * (chexnet train --shrink, which the driver passes), and the driver ends
 * srun once they finished (it would wait for the lost node's tasks until
 * Slurm declares the node down). A rank stopped beside a
 * live one: they exit 76, and the driver gives the host back and
 * relaunches on the nodes left with --resume.
 *   - 2 nodes x 2 ranks, K=1 -> 1 node x 2 ranks, K=2 (the same global
 *     batch): the final learnable parameters equal the uninterrupted
 *     4-rank run's within 1e-5 relative (max(1,|b|)), as the one-node and
 *     two-node runs do (test_multinode_train.c). BN running statistics
 *     are per-rank moving averages (momentum 0.1) updated at every
 *     micro-batch forward, so K=2 updates them twice per step per rank,
 *     and the writer saves its own (the lost ranks' are gone): they are
 *     not equal by construction. The tolerance: no further from the
 *     4-rank run's than those of an uninterrupted 2-rank K=2 run are
 *     (a control measured in the same case), plus 10%.
 *   - a stopped rank: the same outcome once HVD_TIMEOUT_S has passed, its
 *     node left out too (relaunched: rank 2 lives beside it). It runs on
 *     n4, whose host name is h4: the driver gives back Slurm's node n4,
 *     named from the host the ranks report.
 *   - a hung node (its ranks stopped) woken at each point of the others'
 *     recovery, a save of its own included: it leaves the run alone.
 *   - n2 cut off for good while alive (a partition): rank 0's half goes
 *     on, n2's half is left out; a survivor on n1 whose report comes 4 s
 *     late: rank 0 goes on alone, 1 x K=4. Both end with the
 *     uninterrupted 4-rank run's parameters within 1e-5.
 *   These runs start from --init weights with --lr-scale linear, and the
 *   lost and hung ones with --overwrite too: recovery continues the run
 *   from its own settings, whatever it started with, and the LR follows
 *   the micro-batches of a step (R x K), so it stays.
 *   - a spare node (SPARES=1): its ranks join the ranks left's world
 *     in-process at the same 4 ranks (chexnet train --join); a dead
 *     spare's never do, and the ranks left go on without them; a rank
 *     stopped beside a live one: relaunched onto the spare.
 *   - 3 ranks -> 2: no integer K keeps 3 micro-batches per step; K=2 (4,
 *     the nearest; ties go to the larger) with --allow-changes, recorded
 *     in run.json, and the epoch's position moved.
 * Each prints kill_to_step= (ms from the failure to the first progress
 * line after the resume, as the log showed it; the 3 -> 2 -> 1 run also
 * second_loss_to_step=, from n2's failure); bench/recovery.sh collects them.
 * What it does not do: a lost rank whose node lives on in-process (a
 * crash: Slurm ends the step; a hang: the driver relaunches).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_compare.h"
#include "multinode_sh.h"
#include "runner.h"
#include "train/tb_events.h"

#define ELASTIC_ARGS "--size 64 --threads 1 --optimizer sgd --lr 0.001 --batch 4 --seed 7 " \
	"--epochs 1 --progress-every 1 --precision fp32"

/* How the runs compared with each other start: ImageNet-style weights
 * (a one-step run's) and the LR scaled by the micro-batches of a step,
 * 4 x 0.00025: the 0.001 the 1e-5 bound was set at (at 0.004 the same
 * summation-order difference grows to 3.1e-5, measured). */
#define STARTED "--init w0/last/model.safetensors --lr-scale linear --lr 0.00025"

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

/* The group's cases share their data and uninterrupted runs, made by the
 * first case that needs one, in the run's folder beside the cases' own
 * (each would make the same: the generator and the runs are seeded), and
 * linked into each case's folder. */
static const char *shared_dir(void)
{
	static char dir[1100];
	snprintf(dir, sizeof(dir), "%s/../elastic-shared", test_tmpdir());
	return dir;
}

/* tmpdir: build/chexnet, contrib/ (the template's paths), packed
 * generated images in shards, and w0 (the --init weights). */
static int make_data(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p build && cp '%s/chexnet' build/chexnet && ln -s '%s/contrib' "
		 "contrib && c=$PWD/build/chexnet && S='%s' && if [ ! -e \"$S/ready\" ]; then "
		 "mkdir -p \"$S\" && (cd \"$S\" && rm -rf nih shards w0 && "
		 "$c synth --out nih --count 130 --size 128 --seed 3 && "
		 "$c pack --data nih --out shards --size 72 && $c train "
		 "--synthetic --size 64 --batch 2 --steps 1 --threads 1 --backend cpu --precision fp32 "
		 "--quiet --out w0 && touch ready) || exit 1; fi && "
		 "ln -s \"$S/nih\" nih && ln -s \"$S/shards\" shards && ln -s \"$S/w0\" w0",
		 test_tmpdir(), test_build_dir(), test_src_dir(), shared_dir());
	if (sh(cmd, 120, &p))
		return -1;
	int rc = p.exit_code;
	CHECK_MSG(rc == 0, "synth + pack: exit %d: %.600s", rc, p.err);
	test_proc_free(&p);
	return rc == 0 ? 0 : -1;
}

/* tmpdir/shim.so: tests/stall_shim.c, built. */
static int build_shim(void)
{
	char cmd[2048];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -o '%s/shim.so' '%s/tests/stall_shim.c' -ldl",
		 test_tmpdir(), test_src_dir());
	if (sh(cmd, 60, &p))
		return -1;
	int rc = p.exit_code;
	CHECK_MSG(rc == 0, "the shim: %s", p.err);
	test_proc_free(&p);
	return rc == 0 ? 0 : -1;
}

static const char *node_cmd(char *buf, size_t len, const char *verb, const char *node)
{
	snprintf(buf, len, "'%s/tests/slurm/multinode.sh' %s '%s' %s", test_src_dir(), verb,
		 test_cluster_dir(), node);
	return buf;
}

/* After: n3 and n2 back in service. */
static void revive_n3_and_n2(char *after, size_t len)
{
	char revive[1024], revive2[1024];
	snprintf(after, len, "%s; %s", node_cmd(revive, sizeof(revive), "revive", "n3"),
		 node_cmd(revive2, sizeof(revive2), "revive", "n2"));
}

/* On idle nodes, `sbatch --wait LAYOUT` the elastic template with chexnet
 * ARGS (OUT.log holds the job's output). Once the log shows step 3,
 * ACTION runs (ACTION NULL: nothing is done to the job); then waits for
 * the job, runs AFTER, waits for idle nodes. Prints rc=, kill_to_step=
 * and idle=; the log goes to p->err. */
static int elastic(const char *layout, const char *out, const char *args, const char *action,
		   const char *after, struct test_proc *p)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && (" MN_IDLE_SH "wait_idle 900; rm -rf %s; : > %s.log; "
		 "HVD_TIMEOUT_S=4 DATA=shards OUT=%s sbatch --wait " MN_LATE_JOB " %s --gres=gpu:0 "
		 "--cpus-per-task=1 -o %s.log '%s/etc/sbatch/chexnet-elastic.sbatch' " ELASTIC_ARGS
		 " %s > /dev/null & s=$!; "
		 "for i in $(seq 900); do grep -q 'step 3/' %s.log && break; kill -0 $s 2> /dev/null "
		 "|| break; sleep 0.1; done; "
		 "if ! grep -q 'step 3/' %s.log && kill -0 $s 2> /dev/null; then " MN_CANCEL_LATE_SH "fi; "
		 "if [ -n '%s' ] && grep -q 'step 3/' %s.log; then t0=$(date +%%s%%N); %s; "
		 "for i in $(seq 1200); do awk '/resuming from/ { r = 1 } r && / step [0-9]+\\// "
		 "{ f = 1 } END { exit !f }' %s.log && break; kill -0 $s 2> /dev/null || break; "
		 "sleep 0.05; done; echo kill_to_step=$(( ($(date +%%s%%N) - t0) / 1000000 )); fi; "
		 "wait $s; rc=$?; %s; wait_idle 900; cat %s.log >&2; echo rc=$rc; echo idle=$(idle)/$n)",
		 test_tmpdir(), out, out, out, layout, out, test_src_dir(), args, out, out,
		 action ? "1" : "", out, action ? action : ":", out, after, out);
	if (sh(cmd, 240, p))
		return -1;
	CHECK_MSG(!p->timed_out, "timed out: %s ...%s", p->out, test_tail(p->err, 1500));
	CHECK_MSG(!strstr(p->out, "not_started=1"), "the job showed no step 3 within 90 s; nothing "
		  "was done to it: %.1500s ...%s", p->out, test_tail(p->err, 1500));
	if (!p->timed_out && !strstr(p->out, "not_started=1"))
		return 0;
	test_proc_free(p);
	return -1;
}

/* No completed step lost: OUT/last holds at least the last step rank 0
 * printed before the failure (a step can complete on every rank and its
 * progress line fail: one more). */
static long check_steps_kept(const char *log, int epochs)
{
	const char *lost = strstr(log, "chexnet: peer lost: ");
	const char *held = lost ? strstr(lost, "OUT/last holds epoch 1, step ") : NULL;
	long printed = -1;
	char first[32];
	snprintf(first, sizeof(first), "epoch 1/%d step ", epochs);
	for (const char *s = log; (s = strstr(s, first)) && s < lost; s++)
		printed = strtol(s + strlen(first), NULL, 10);
	long kept = held ? strtol(held + strlen("OUT/last holds epoch 1, step "), NULL, 10) : -1;
	CHECK_MSG(printed >= 3 && (kept == printed || kept == printed + 1), "step %ld printed before "
		  "the failure, OUT/last holds step %ld: %.2000s", printed, kept, test_tail(log, 2000));
	return kept;
}

/* OUT/run.json as text, or NULL (a recorded failure). */
static char *record_of(const char *out)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s/run.json", test_tmpdir(), out);
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 1 << 20);
	size_t n = f && text ? fread(text, 1, (1 << 20) - 1, f) : 0;
	if (f)
		fclose(f);
	CHECK_MSG(n > 0, "%s: unreadable", path);
	if (n == 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The uninterrupted run `out` (elastic's LAYOUT and ARGS, nothing done
 * to it) in tmpdir: the group's shared one, made here if no case did. */
static int reference(const char *out, const char *layout, const char *args)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cd '%s' && [ -e '%s/%s/last' ] && ln -s '%s/%s' %s", test_tmpdir(),
		 shared_dir(), out, shared_dir(), out, out);
	if (test_run(cmd, 10, &p) == 0 && p.exit_code == 0) {
		test_proc_free(&p);
		return 0;
	}
	test_proc_free(&p);
	if (elastic(layout, out, args, NULL, ":", &p))
		return -1;
	long rc = field_of(p.out, "rc=");
	CHECK_MSG(rc == 0, "%s: %s ...%s", out, p.out, test_tail(p.err, 1500));
	test_proc_free(&p);
	snprintf(cmd, sizeof(cmd), "cd '%s' && mv %s '%s/' && ln -s '%s/%s' %s", test_tmpdir(), out,
		 shared_dir(), shared_dir(), out, out);
	if (rc != 0 || sh(cmd, 10, &p))
		return -1;
	rc = p.exit_code;
	test_proc_free(&p);
	return rc == 0 ? 0 : -1;
}

/* The uninterrupted 2 x 2 run (whole) and 1 x 2 K=2 run (two) of this
 * case's data. */
static int references(void)
{
	return reference("whole", "-N 2 -w n1,n2 --ntasks-per-node=2", STARTED) ||
	       reference("two", "-N 1 -w n1 --ntasks-per-node=2", STARTED " --accumulate 2") ? -1 : 0;
}

/* OUT's final learnable parameters against the uninterrupted run REF's:
 * within 1e-5 relative (max(1,|b|)). Returns the difference. */
static double same_parameters(const char *out, const char *ref, const char *what)
{
	double d = ckpt_max_rel_diff(out, ref);
	CHECK_MSG(d >= 0 && d <= 1e-5, "%s vs the uninterrupted run (%s): max relative parameter "
		  "difference %.3g", what, ref, d);
	return d;
}

/* A 2 x 2 run that lost Slurm's node `node` (or a rank there), whose
 * host name is `host`, ended like the whole one: in its own processes,
 * or relaunched. */
static void check_went_on(const struct test_proc *p, const char *out, const char *what,
			  int in_process, const char *host, const char *node)
{
	char line[256];

	CHECK_MSG(field_of(p->out, "rc=") == 0, "%s: %s ...%s", what, p->out, test_tail(p->err, 2500));
	if (in_process) {
		CHECK_CONTAINS(p->err, "no completed step is lost; ranks 0,1 go on without host(s) "
			       "n2 in their own processes");
		CHECK_CONTAINS(p->err, "chexnet-elastic: lost n2; ranks 0,1 went on in their own "
			       "processes");
		CHECK_CONTAINS(p->err, "chexnet: train: rank 0 of 4 goes on as rank 0 of 2 in the "
			       "same process: --accumulate 2 keeps the global batch");
		CHECK_MSG(!strstr(p->err, "relaunching"), "%s: relaunched: %s", what,
			  test_tail(p->err, 2500));
	} else {
		snprintf(line, sizeof(line), "chexnet-elastic: lost %s after ", host);
		CHECK_CONTAINS(p->err, line);
		snprintf(line, sizeof(line), "now holds n1: %s went back to Slurm", node);
		CHECK_CONTAINS(p->err, line);
		CHECK_CONTAINS(p->err, "relaunching on 2 ranks (was 4): --accumulate 2 keeps the "
			       "global batch (4 micro-batches)");
		CHECK_CONTAINS(p->err, "no completed step is lost; exit 76");
	}
	CHECK_CONTAINS(p->err, "chexnet: resuming from ");
	CHECK_CONTAINS(p->err, "end of epoch 1/1 step 6/6");
	check_steps_kept(p->err, 1);
	CHECK_CONTAINS(p->out, "idle=4/4");
	char *rec = record_of(out);
	CHECK_MSG(rec && strstr(rec, "\"membership\"") && strstr(rec, "\"4 -> 2\"") &&
		  strstr(rec, "\"steps_lost\":\t\"0\"") && strstr(rec, "\"outcome\":\t\"finished\"") &&
		  !strstr(rec, "\"lr_effective\":\t[") && !strstr(rec, "\"global_batch\":\t["),
		  "run.json (the LR and global batch kept): %.2500s", rec ? rec : "");
	free(rec);
	double params = same_parameters(out, "whole", what);
	double bn = ckpt_max_rel_diff_bn(out, "whole"), control = ckpt_max_rel_diff_bn("two", "whole");
	CHECK_MSG(bn >= 0 && bn <= control * 1.1, "%s: BN running statistics %.3g from the 4-rank "
		  "run's, more than an uninterrupted 2-rank K=2 run's %.3g (+10%%)", what, bn, control);
	printf("  measured (%s): failure to the first step after, %s, %ld ms; parameters %.3g, BN "
	       "statistics %.3g from the uninterrupted 4-rank run (2-rank K=2 control: %.3g)\n", what,
	       in_process ? "in-process" : "relaunched", field_of(p->out, "kill_to_step="), params,
	       bn, control);
}

/* OUT's generation 2 decided by rank 0 on n1 with these members; its
 * run.json records this membership change and a finished run. */
static void check_rank_0_decided(const char *out, const char *members, const char *change)
{
	char path[1024], want[64];
	snprintf(path, sizeof(path), "%s/%s/.generations/2", test_tmpdir(), out);
	char *decision = test_read_file(path, NULL);
	snprintf(want, sizeof(want), "members=%s ", members);
	CHECK_MSG(decision && strstr(decision, want) && strstr(decision, "by=rank-0@n1"),
		  "%s: generation 2: %s", out, decision ? decision : "(none)");
	free(decision);
	char *rec = record_of(out);
	snprintf(want, sizeof(want), "\"%s\"", change);
	CHECK_MSG(rec && strstr(rec, want) && strstr(rec, "\"outcome\":\t\"finished\""),
		  "%s/run.json: %.2500s", out, rec ? rec : "");
	free(rec);
}

/* n2 fails; rank 1 on n1, a survivor, writes its report 4 s late (its
 * open held by tests/stall_shim.c: a slow NFS server), after rank 0's
 * decision (made once SURVIVORS_WAIT_S passed without it), which leaves
 * it out. Rank 0 goes on alone, 1 x K=4, the global batch kept; rank 1
 * leaves OUT alone and waits for the step's end (its exit would end rank
 * 0's step too). Two epochs, so rank 0 is still training when rank 1
 * reads the decision. The parameters equal the uninterrupted 4-rank
 * two-epoch run's within 1e-5. */
static void late_survivor_is_left_out(void)
{
	struct test_proc p;
	char layout[2048], fail[1024], revive[1024];
	if (build_shim())
		return;
	snprintf(layout, sizeof(layout), "-N 2 -w n1,n2 --ntasks-per-node=2 --export=ALL,LD_PRELOAD="
		 "%s/shim.so,HVD_STALL_PATH=.writes/1.tmp-,HVD_STALL_S=4,"
		 "ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"", test_tmpdir());
	if (elastic(layout, "late", STARTED " --epochs 2", node_cmd(fail, sizeof(fail), "fail", "n2"),
		    node_cmd(revive, sizeof(revive), "revive", "n2"), &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 0, "late: %s ...%s", p.out, test_tail(p.err, 2500));
	CHECK_CONTAINS(p.err, "hvd: ranks 2,3 (host n2): 'silent for ");
	CHECK_CONTAINS(p.err, "chexnet: train: rank 1 of 4: the survivors' decision (generation 2: "
		       "ranks 0 go on) leaves this rank out: OUT left alone, waiting for the step to "
		       "end");
	CHECK_CONTAINS(p.err, "chexnet: train: rank 0 of 4 goes on as rank 0 of 1 in the same "
		       "process: --accumulate 4 keeps the global batch");
	CHECK_CONTAINS(p.err, "end of epoch 2/2 step 6/6");
	check_steps_kept(p.err, 2);
	check_rank_0_decided("late", "0", "4 -> 1");
	double params = same_parameters("late", "whole2", "a late survivor left out");
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured (n2 lost, survivor rank 1's report 4 s late: left out): failure to the "
	       "first step after, in-process, %ld ms; parameters %.3g from the uninterrupted 4-rank "
	       "run\n", field_of(p.out, "kill_to_step="), params);
	test_proc_free(&p);
}

/* The TensorBoard point of tag at the session start after a loss: the
 * last value of tag in OUT/tb's event files (our reader; trainer-metrics
 * has TensorBoard's own read the same files). -1: none. */
struct tb_last { const char *tag; float value; };

static int last_of(const struct tb_event *e, void *user)
{
	struct tb_last *l = user;
	for (int i = 0; i < e->count; i++)
		if (strcmp(e->values[i].tag, l->tag) == 0)
			l->value = e->values[i].value;
	return 0;
}

static float tb_last_value(const char *out, const char *tag)
{
	char cmd[1024];
	struct test_proc p;
	struct tb_last l = { tag, -1 };
	struct trainer_error err = { "" };
	snprintf(cmd, sizeof(cmd), "ls '%s/%s/tb/'events.out.tfevents.* | sort", test_tmpdir(), out);
	if (sh(cmd, 10, &p))
		return -1;
	for (char *f = strtok(p.out, "\n"); f; f = strtok(NULL, "\n"))
		CHECK_MSG(tb_events_read(f, last_of, &l, &err) == 0, "%s", err.msg);
	test_proc_free(&p);
	return l.value;
}

/* A spare case's run `out` ended like the uninterrupted 4-rank run: rc 0,
 * the epoch's last step, no completed step lost, run.json finished with
 * each of `record` (NULL-ended), the parameters within 1e-5, every node
 * idle after. Prints the measured line for `what` ("how, " prefix). */
static void spare_case_ended(const struct test_proc *p, const char *out, const char *what,
			     const char *how, const char *const *record)
{
	CHECK_MSG(field_of(p->out, "rc=") == 0, "%s: %s ...%s", out, p->out, test_tail(p->err, 2500));
	CHECK_CONTAINS(p->err, "end of epoch 1/1 step 6/6");
	check_steps_kept(p->err, 1);
	char *rec = record_of(out);
	int has = rec && strstr(rec, "\"outcome\":\t\"finished\"");
	for (int i = 0; has && record[i]; i++)
		has = strstr(rec, record[i]) != NULL;
	CHECK_MSG(has, "%s/run.json: %.2500s", out, rec ? rec : "");
	free(rec);
	double params = same_parameters(out, "whole", what);
	CHECK_CONTAINS(p->out, "idle=4/4");
	printf("  measured (%s): failure to the first step after%s %ld ms; parameters %.3g from the "
	       "uninterrupted 4-rank run\n", what, how, field_of(p->out, "kill_to_step="), params);
}

/* SPARES=1 on 3 nodes: the run starts on n1 and n2, n3 waits. n2 fails:
 * ranks 0,1 go on in their own processes, and the driver starts
 * `chexnet train --join G` on n3, whose two ranks join their world as
 * ranks 2,3: the same 4 ranks and K=1, no relaunch. The parameters equal
 * the uninterrupted 4-rank run's within 1e-5, run.json says 4 -> 4, went
 * on in-process, ranks 2-3 joined; TensorBoard has the lost host. */
static void test_a_spare_node_joins_in_the_place_of_a_lost_one(void)
{
	struct test_proc p;
	char fail[1024], revive[1024];
	if (make_data() || references() ||
	    elastic("-N 3 -w n1,n2,n3 --ntasks-per-node=2 --export=ALL,SPARES=1", "spare", STARTED,
		    node_cmd(fail, sizeof(fail), "fail", "n2"),
		    node_cmd(revive, sizeof(revive), "revive", "n2"), &p))
		return;
	CHECK_CONTAINS(p.err, "hvd: ranks 2,3 (host n2): 'silent for ");
	CHECK_CONTAINS(p.err, "no completed step is lost; ranks 0,1 go on in their own processes, "
		       "2 rank(s) of 1 spare node(s) join in the place of host(s) n2");
	CHECK_CONTAINS(p.err, "chexnet-elastic: spare node(s) n3 take the place of n2: 2 rank(s) "
		       "join the ranks left in their own processes (generation 2)");
	CHECK_CONTAINS(p.err, "as rank 2 of 4 (generation 2, in the place of host(s) n2)");
	CHECK_CONTAINS(p.err, "as rank 3 of 4 (generation 2, in the place of host(s) n2)");
	CHECK_CONTAINS(p.err, "chexnet: train: rank 0 of 4 goes on as rank 0 of 4 in the same "
		       "process, 2 rank(s) of spare nodes joining: --accumulate 1 keeps the global "
		       "batch");
	CHECK_MSG(!strstr(p.err, "relaunching"), "relaunched: %s", test_tail(p.err, 2500));
	CHECK_MSG(tb_last_value("spare", "run/hosts_lost") == 1 &&
		  tb_last_value("spare", "run/ranks") == 4, "TensorBoard: run/hosts_lost %g, run/ranks "
		  "%g after the join (want 1 and 4)", tb_last_value("spare", "run/hosts_lost"),
		  tb_last_value("spare", "run/ranks"));
	static const char *const record[] = { "\"4 -> 4\"", "\"1 -> 1\"",
		"\"went_on\":\t\"in-process\"", "\"joined\":\t\"ranks 2-3\"", NULL };
	spare_case_ended(&p, "spare", "n2 lost, spare n3's ranks joined in-process", "", record);
	test_proc_free(&p);
}

/* The same, but the spare died too (n3 fails just before n2, unseen:
 * no rank runs there): its ranks never join, the world of 4 does not
 * form within HVD_TIMEOUT_S, and ranks 0,1 decide again and go on as
 * 1 x 2, K=2 (the global batch kept), as after a loss during recovery.
 * The driver names the spares' step that failed; the run finishes with
 * the uninterrupted run's parameters. */
static void test_a_spare_that_never_joins_is_a_loss_like_any_other(void)
{
	struct test_proc p;
	char fail[1024], fail2[1024], action[2100], after[2100];
	snprintf(action, sizeof(action), "%s; %s", node_cmd(fail, sizeof(fail), "fail", "n3"),
		 node_cmd(fail2, sizeof(fail2), "fail", "n2"));
	revive_n3_and_n2(after, sizeof(after));
	if (make_data() || references() ||
	    elastic("-N 3 -w n1,n2,n3 --ntasks-per-node=2 --export=ALL,SPARES=1", "nospare", STARTED,
		    action, after, &p))
		return;
	CHECK_CONTAINS(p.err, "chexnet-elastic: spare node(s) n3 take the place of n2: 2 rank(s) "
		       "join the ranks left in their own processes (generation 2)");
	CHECK_CONTAINS(p.err, "chexnet: train: the ranks left could not start again: rank 2 (host ?), "
		       "rank 3 (host ?) never joined; OUT/last holds epoch 1, step ");
	CHECK_CONTAINS(p.err, "chexnet-elastic: ranks 0,1 went on in their own processes without "
		       "the spares' ranks, which never joined");
	CHECK_CONTAINS(p.err, "chexnet-elastic: the spares' step on n3 ");   /* failed, or ended */
	CHECK_CONTAINS(p.err, "chexnet: train: rank 0 of 4 goes on as rank 0 of 2 in the same "
		       "process: --accumulate 2 keeps the global batch");
	CHECK_MSG(!strstr(p.err, "relaunching"), "relaunched: %s", test_tail(p.err, 2500));
	static const char *const record[] = { "\"4 -> 2\"", "\"1 -> 2\"", NULL };
	spare_case_ended(&p, "nospare", "n2 lost, spare n3 dead: 4 -> 2 ranks in-process", "",
			 record);
	test_proc_free(&p);
}

/* SPARES=1 again, but rank 3 on n2 stopped (SIGSTOP) beside a live rank
 * 2: no in-process world can keep n2's live rank, so every rank left
 * exits 76 and the driver relaunches onto the spare: n1 and n3, the
 * same 4 ranks and K=1, the uninterrupted run's parameters. */
static void test_a_spare_takes_a_hung_ranks_node_by_a_relaunch(void)
{
	struct test_proc p;
	char stop[2048];
	snprintf(stop, sizeof(stop), ". '%s/net.env'; for q in $(ip netns pids hvd-$id-n2); do "
		 "[ \"$(cat /proc/$q/comm 2> /dev/null)\" = chexnet ] && tr '\\0' '\\n' < /proc/$q/environ "
		 "| grep -qx SLURM_PROCID=3 && kill -STOP $q && echo stopped=$q; done",
		 test_cluster_dir());
	if (make_data() || references() ||
	    elastic("-N 3 -w n1,n2,n3 --ntasks-per-node=2 --export=ALL,SPARES=1", "spare-hung", STARTED,
		    stop, ":", &p))
		return;
	CHECK_CONTAINS(p.out, "stopped=");
	CHECK_CONTAINS(p.err, "hvd: rank 3 (host n2): 'silent for ");
	CHECK_CONTAINS(p.err, "no completed step is lost; exit 76");
	CHECK_CONTAINS(p.err, "chexnet-elastic: spare node(s) n3 take the place of n2\n");
	CHECK_CONTAINS(p.err, "now holds n1,n3: n2 went back to Slurm");
	CHECK_CONTAINS(p.err, "relaunching on 4 ranks (was 4): --accumulate 1 keeps the global "
		       "batch (4 micro-batches)");
	static const char *const record[] = { "\"4 -> 4\"", "\"went_on\":\t\"relaunch\"", NULL };
	spare_case_ended(&p, "spare-hung", "rank 3 stopped on n2, spare n3 relaunched in its place",
			 ", relaunched,", record);
	test_proc_free(&p);
}

/* n2 failed: the ranks left go on in-process; then (a second run) rank 3
 * on n2 stopped: named after HVD_TIMEOUT_S, rank 2 there lives, so the
 * step ends and is relaunched without n2. */
static void test_lost_node_or_stopped_rank_goes_on_with_the_same_global_batch(void)
{
	struct test_proc p;
	char fail[1024], revive[1024], stop[2048];
	if (make_data() || references())
		return;
	if (elastic("-N 2 -w n1,n2 --ntasks-per-node=2", "lost", STARTED " --overwrite",
		    node_cmd(fail, sizeof(fail), "fail", "n2"),
		    node_cmd(revive, sizeof(revive), "revive", "n2"), &p))
		return;
	CHECK_CONTAINS(p.err, "hvd: ranks 2,3 (host n2): 'silent for ");
	check_went_on(&p, "lost", "n2 lost", 1, "n2", "n2");
	test_proc_free(&p);
	/* on n4, whose host is h4: the driver gives back Slurm's node */
	snprintf(stop, sizeof(stop), ". '%s/net.env'; for q in $(ip netns pids hvd-$id-n4); do "
		 "[ \"$(cat /proc/$q/comm 2> /dev/null)\" = chexnet ] && tr '\\0' '\\n' < /proc/$q/environ "
		 "| grep -qx SLURM_PROCID=3 && kill -STOP $q && echo stopped=$q; done",
		 test_cluster_dir());
	if (elastic("-N 2 -w n1,n4 --ntasks-per-node=2", "hung", STARTED " --overwrite", stop, ":", &p))
		return;
	CHECK_CONTAINS(p.out, "stopped=");
	CHECK_CONTAINS(p.err, "hvd: rank 3 (host h4): 'silent for ");
	check_went_on(&p, "hung", "rank 3 stopped on n4 (host h4)", 0, "h4", "n4");
	test_proc_free(&p);
}

/* n2 cut off for good at step 3, alive (a partition: both halves see the
 * other lost): rank 0's half claims the decision at once, n2's half
 * defers, reads it and is left out. The run ends as if n2 had failed:
 * 4 -> 2 ranks, K=2, the parameters of the uninterrupted 4-rank run
 * within 1e-5, generation 2 decided by rank 0 on n1. */
static void partition_leaves_one_half_going_on(void)
{
	struct test_proc p;
	char cut[1024], after[2100], restore[1024], revive[1024];
	snprintf(after, sizeof(after), "%s; %s", node_cmd(restore, sizeof(restore), "restore", "n2"),
		 node_cmd(revive, sizeof(revive), "revive", "n2"));
	if (elastic("-N 2 -w n1,n2 --ntasks-per-node=2", "split", STARTED,
		    node_cmd(cut, sizeof(cut), "cut", "n2"), after, &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 0, "split: %s ...%s", p.out, test_tail(p.err, 2500));
	CHECK_CONTAINS(p.err, "hvd: ranks 2,3 (host n2): 'silent for ");
	CHECK_CONTAINS(p.err, "no completed step is lost; ranks 0,1 go on without host(s) n2 in their "
		       "own processes");
	CHECK_CONTAINS(p.err, "chexnet-elastic: lost n2; ranks 0,1 went on in their own processes");
	CHECK_CONTAINS(p.err, "end of epoch 1/1 step 6/6");
	check_steps_kept(p.err, 1);
	check_rank_0_decided("split", "0,1", "4 -> 2");
	double params = same_parameters("split", "whole", "a partition");
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured (n2 cut off, alive: a partition, rank 0's half went on): failure to the "
	       "first step after, in-process, %ld ms; parameters %.3g from the uninterrupted 4-rank "
	       "run\n", field_of(p.out, "kill_to_step="), params);
	test_proc_free(&p);
}

/* Exactly one writer, whoever arrives late: a partition, then a
 * survivor whose report comes after the decision. */
static void test_a_partition_or_a_late_survivor_leaves_one_writer(void)
{
	if (make_data() || reference("whole", "-N 2 -w n1,n2 --ntasks-per-node=2", STARTED) ||
	    reference("whole2", "-N 2 -w n1,n2 --ntasks-per-node=2", STARTED " --epochs 2"))
		return;
	partition_leaves_one_half_going_on();
	late_survivor_is_left_out();
}

/* A hung node: its chexnet processes stopped (SIGSTOP), on n2 at step 3,
 * or on n1 (ranks 0 and 1) inside rank 0's save of step 3 (--save-every
 * 3; tests/stall_shim.c holds the second open(2) of n1's temporary
 * checkpoint, the directory's fsync once its files are written, 2 s, and
 * marks it: the stop lands there, just before the rename). They are woken
 * at one point of the others' recovery (the others train 6 steps; one
 * epoch: over two, a 2-rank K=2 run drifts 2.2e-5 from the 4-rank one,
 * measured):
 *   - before: once the leader reported, before it raised the generation
 *     (rank 1's report comes 2 s late, inside the leader's 3 s wait);
 *   - start: once the generation is raised, before the new world's first
 *     step;
 *   - first-step: after the new world's first step;
 *   - save: the stopped save of an older generation finishes.
 * The woken ranks are left out (their reports come after, or are of ranks
 * named lost) or find a newer generation, and leave OUT alone; a save of
 * theirs is not renamed into place: the fence refuses it, or the new
 * generation's claimant has removed its writes folder (base/fence.h)
 * while it wrote, which it says the same way. The run ends as if the node
 * had died: run.json finished, the uninterrupted 4-rank run's parameters
 * within 1e-5, one decision (its members and writer). */
struct wake_point {
	const char *name, *layout, *args, *stop_node, *stop_when, *wake_when, *members, *by;
	int generation, stepped;  /* at the wake: generation 2 raised, the new world stepped
				     (-1: either) */
};

#define RESUMED_AND_STEPPED(out) "awk '/resuming from/ { r = 1 } r && / step [0-9]+\\// { f = 1 } " \
	"END { exit !f }' " out ".log"

static void woken_at(const struct wake_point *w)
{
	struct test_proc p;
	char action[4096], out[64], layout[2048], want[256];
	snprintf(out, sizeof(out), "woke-%s", w->name);
	snprintf(layout, sizeof(layout), "-N 2 -w n1,n2 --ntasks-per-node=2 --export=ALL,LD_PRELOAD="
		 "%s/shim.so,%s,ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"", test_tmpdir(),
		 w->layout);
	/* the stopper and the waker; their lines go to OUT.wake */
	snprintf(action, sizeof(action), "(. '%s/net.env'; o=%s; for i in $(seq 300); do %s && break; "
		 "sleep 0.01; done; z=''; for q in $(ip netns pids hvd-$id-%s); do "
		 "[ \"$(cat /proc/$q/comm 2> /dev/null)\" = chexnet ] && kill -STOP $q && z=\"$z $q\"; "
		 "done; echo stopped=$z; for i in $(seq 1500); do %s && break; sleep 0.02; done; "
		 "[ -e $o/.generations/2 ]; echo generation_at_wake=$((1 - $?)); " RESUMED_AND_STEPPED("$o")
		 "; echo stepped_at_wake=$((1 - $?)); kill -CONT $z) > %s.wake 2>&1 & true",
		 test_cluster_dir(), out, w->stop_when, w->stop_node, w->wake_when, out);
	if (elastic(layout, out, w->args, action, ":", &p))
		return;
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s.wake", test_tmpdir(), out);
	char *wake = test_read_file(path, NULL);
	CHECK_MSG(field_of(p.out, "rc=") == 0, "woken (%s): %s ...%s", w->name, p.out,
		  test_tail(p.err, 2500));
	CHECK_MSG(wake && strstr(wake, "stopped= "), "woken (%s): nothing stopped: %s", w->name,
		  wake ? wake : "(no OUT.wake)");
	long generation = wake ? field_of(wake, "generation_at_wake=") : -1;
	long stepped = wake ? field_of(wake, "stepped_at_wake=") : -1;
	CHECK_MSG((w->generation < 0 || generation == w->generation) &&
		  (w->stepped < 0 || stepped == w->stepped), "woken (%s) at the wrong point: generation 2 raised %ld, the new world "
		  "stepped %ld", w->name, generation, stepped);
	/* The members: w's, or fewer when a survivor of the live node
	 * reported after the leader's wait (a loaded machine: the design
	 * leaves it out, and it stands aside below like the woken ranks) */
	snprintf(path, sizeof(path), "%s/%s/.generations/2", test_tmpdir(), out);
	char *decision = test_read_file(path, NULL), members[16] = "?";
	const char *m = decision ? strstr(decision, "members=") : NULL;
	if (m)
		sscanf(m, "members=%15[0-9,]", members);
	int fewer = strcmp(members, w->members) && strlen(members) == 1 && strchr(w->members, members[0]);
	CHECK_MSG(!strcmp(members, w->members) || fewer, "woken (%s): generation 2: %s", w->name,
		  decision ? decision : "(none)");
	if (fewer)
		printf("  measured (a hung node woken: %s): members %s, not %s: a live survivor "
		       "reported after the leader's wait\n", w->name, members, w->members);
	for (int r = 0; r < 4; r++) {
		if (strchr(members, '0' + r))  /* ranks 0-3: one digit */
			continue;
		char out_line[128], gone_line[128];
		snprintf(out_line, sizeof(out_line), "chexnet: train: rank %d of 4: the survivors' "
			 "decision (generation 2: ranks %s go on) leaves this rank out", r, members);
		snprintf(gone_line, sizeof(gone_line), "chexnet: train: rank %d of 4: the run went on "
			 "without it (generation ", r);
		CHECK_MSG(strstr(p.err, out_line) || strstr(p.err, gone_line), "woken (%s): rank %d "
			  "did not stand aside: ...%s", w->name, r, test_tail(p.err, 2500));
	}
	if (strcmp(w->name, "save") == 0) {  /* refused, or its temporary gone (the writer's) */
		snprintf(want, sizeof(want), "chexnet: checkpoint: '%s/last", out);
		const char *save = strstr(p.err, want);
		CHECK_MSG(save && (strstr(save, "a newer generation of the run") ||
				   strstr(save, "': fsync: No such file or directory")) &&
			  strstr(save, "rank 0 of 4: the run went on without it"), "woken (%s): rank 0's "
			  "save: ...%s", w->name, test_tail(p.err, 2500));
	}
	CHECK_CONTAINS(p.err, "end of epoch 1/1 step 6/6");
	CHECK_MSG(decision && strstr(decision, w->by), "woken (%s): generation 2: %s", w->name,
		  decision ? decision : "(none)");
	free(decision);
	char *rec = record_of(out);
	snprintf(want, sizeof(want), "\"4 -> %d\"", fewer ? 1 : 2);
	CHECK_MSG(rec && strstr(rec, want) && strstr(rec, "\"outcome\":\t\"finished\""),
		  "woken (%s): run.json: %.2500s", w->name, rec ? rec : "");
	free(rec);
	struct test_proc left;
	snprintf(path, sizeof(path), "ls -a '%s/%s' | grep tmp; :", test_tmpdir(), out);
	if (sh(path, 10, &left) == 0)
		CHECK_MSG(!left.out[0], "woken (%s): temporaries left in OUT: %s", w->name, left.out);
	test_proc_free(&left);
	double params = same_parameters(out, "whole", w->name);
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured (a hung node woken: %s): failure to the first step after %ld ms; "
	       "parameters %.3g from the uninterrupted 4-rank run\n", w->name,
	       field_of(p.out, "kill_to_step="), params);
	free(wake);
	test_proc_free(&p);
}

static void test_a_hung_node_woken_at_any_point_leaves_the_run_alone(void)
{
	static const struct wake_point points[] = {
		{ "before", "HVD_STALL_PATH=.writes/1.tmp-,HVD_STALL_S=2", STARTED, "n2",
		  "true", "[ -e $o/.survivors/0 ]", "0,1", "by=rank-0@n1", 0, -1 },
		{ "start", "HVD_STALL_PATH=none", STARTED, "n2", "true",
		  "[ -e $o/.generations/2 ]", "0,1", "by=rank-0@n1", 1, 0 },
		{ "first-step", "HVD_STALL_PATH=none", STARTED, "n2", "true",
		  RESUMED_AND_STEPPED("$o"), "0,1", "by=rank-0@n1", -1, 1 },
		{ "save", "HVD_STALL_PATH=last.tmp-n1-,HVD_STALL_SKIP=1,HVD_STALL_S=2,HVD_STALL_MARK="
		  "$PWD/woke-save.stalled", STARTED " --save-every 3", "n1", "[ -e $o.stalled ]",
		  RESUMED_AND_STEPPED("$o"), "2,3", "by=rank-2@n2", -1, 1 },
	};
	if (make_data() || build_shim() ||
	    reference("whole", "-N 2 -w n1,n2 --ntasks-per-node=2", STARTED))
		return;
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		woken_at(&points[i]);
}

/* 3 ranks (one per node) -> 2 after n3 fails, in their own processes:
 * K=2, global batch 12 -> 16; then n2 fails too: 1 rank, K=3, the run's
 * own 12 again (not 16 kept, which the nearest choice gave). The run
 * (100 epochs) outlives Slurm's
 * declaring n3 down (SlurmdTimeout 20 s here: `Node failure on n3`),
 * which ends a step launched without srun's --no-kill (the driver's
 * srun has it); a progress line after that, scancel --signal=TERM: the
 * ranks left save and stop (exit 75). */
static void test_three_ranks_go_on_as_two_with_the_nearest_global_batch(void)
{
	struct test_proc p;
	char fail[1024], action[4096];
	if (make_data())
		return;
	char fail2[1024], after[2100];
	snprintf(action, sizeof(action), "%s; ( for i in $(seq 900); do grep -q 'Node failure on n3' "
		 "odd.log && break; kill -0 $s 2> /dev/null || exit; sleep 0.1; done; "
		 "n=$(grep -c ' step [0-9]*/' odd.log); for i in $(seq 600); do "
		 "[ $(grep -c ' step [0-9]*/' odd.log) -gt $n ] && break; kill -0 $s 2> /dev/null || exit; "
		 "sleep 0.1; done; t2=$(date +%%s%%N); %s; for i in $(seq 900); do grep -q 'goes on as rank "
		 "0 of 1' odd.log && break; kill -0 $s 2> /dev/null || exit; sleep 0.02; done; "
		 "n=$(grep -c ' step [0-9]*/' odd.log); for i in $(seq 3000); do "
		 "[ $(grep -c ' step [0-9]*/' odd.log) -gt $n ] && break; kill -0 $s 2> /dev/null || exit; "
		 "sleep 0.02; done; echo second_loss_to_step=$(( ($(date +%%s%%N) - t2) / 1000000 )); "
		 "echo stopped_after_node_down=1; scancel -s TERM -n hvd-late-$$ ) & :",
		 node_cmd(fail, sizeof(fail), "fail", "n3"), node_cmd(fail2, sizeof(fail2), "fail", "n2"));
	revive_n3_and_n2(after, sizeof(after));
	if (elastic("-N 3 -w n1,n2,n3 --ntasks-per-node=1", "odd", "--epochs 100", action, after, &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 75 && strstr(p.out, "stopped_after_node_down=1"),
		  "%s ...%s", p.out, test_tail(p.err, 2500));
	CHECK_CONTAINS(p.err, "hvd: rank 2 (host n3): 'silent for ");
	CHECK_CONTAINS(p.err, "chexnet: train: rank 0 of 3 goes on as rank 0 of 2 in the same "
		       "process: --accumulate 2 gives the nearest global batch (--allow-changes) (4 "
		       "micro-batches per step, was 3)");
	CHECK_CONTAINS(p.err, "chexnet-elastic: lost n3; ranks 0,1 went on in their own processes");
	CHECK_CONTAINS(p.err, "global_batch 12 -> 16");
	/* the second loss: back to the run's own 3 micro-batches, not 4 */
	CHECK_CONTAINS(p.err, "chexnet: train: rank 0 of 2 goes on as rank 0 of 1 in the same "
		       "process: --accumulate 3 keeps the global batch (3 micro-batches per step, was "
		       "3)");
	CHECK_CONTAINS(p.err, "chexnet-elastic: lost n2; ranks 0 went on in their own processes");
	CHECK_CONTAINS(p.err, "global_batch 16 -> 12");
	CHECK_CONTAINS(p.err, "end of epoch 1/100 step ");
	const char *down = strstr(p.err, "srun: error: Node failure on n3");
	CHECK_MSG(down && strstr(down, " step ") && strstr(down, "odd/last written; exit 75"),
		  "no progress after Slurm declared n3 down, or no stop: ...%s", test_tail(p.err, 2500));
	long k = check_steps_kept(p.err, 100);
	char moved[256];   /* e.g. step 3: 36 images in, step 2 holds 32 */
	snprintf(moved, sizeof(moved), "chexnet: --resume: global batch 12 -> 16: step %ld of the "
		 "epoch becomes step %ld (%ld images in, %ld of them seen again)", k, k * 12 / 16, k * 12,
		 k * 12 - k * 12 / 16 * 16);
	CHECK_CONTAINS(p.err, moved);
	char *rec = record_of("odd");
	CHECK_MSG(rec && strstr(rec, "\"3 -> 2\"") && strstr(rec, "\"global_batch\":\t[\"12\", \"16\"]")
		  && strstr(rec, "\"2 -> 1\"") && strstr(rec, "\"global_batch\":\t[\"16\", \"12\"]")
		  && strstr(rec, "\"went_on\":\t\"in-process\"") &&
		  strstr(rec, "\"outcome\":\t\"stopped\""), "run.json: %.2500s", rec ? rec : "");
	free(rec);
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured (3 -> 2 ranks, in-process): failure to the first step after %ld ms\n",
	       field_of(p.out, "kill_to_step="));
	printf("  measured (then 2 -> 1, the second loss, in-process): failure to the first step "
	       "after %ld ms\n", field_of(p.out, "second_loss_to_step="));
	test_proc_free(&p);
}

/* A loss during recovery: 3 ranks (one per node), n3 fails; n2 fails
 * once its rank reported to the survivors' decision, before the world of
 * the ranks left forms. That world does not form (rank 1 never joins):
 * rank 0 makes a second decision alone, as after any loss, and goes on
 * as 1 rank x K=3, the run's own global batch of 12 (the 2-rank world,
 * K=2, never ran a step). The final parameters equal an uninterrupted
 * 3-rank run's within 1e-5 relative. */
static void test_a_loss_during_recovery_is_a_loss_like_any_other(void)
{
	struct test_proc p;
	char fail[1024], fail2[1024], action[4096], after[2100];
	if (make_data() ||
	    elastic("-N 3 -w n1,n2,n3 --ntasks-per-node=1", "three", "", NULL, ":", &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 0, "three: %s ...%s", p.out, test_tail(p.err, 1500));
	test_proc_free(&p);
	snprintf(action, sizeof(action), "%s; for i in $(seq 3000); do [ -f during/.survivors/1 ] && "
		 "break; sleep 0.01; done; %s; echo n2_failed_after_its_report=$i",
		 node_cmd(fail, sizeof(fail), "fail", "n3"), node_cmd(fail2, sizeof(fail2), "fail", "n2"));
	revive_n3_and_n2(after, sizeof(after));
	if (elastic("-N 3 -w n1,n2,n3 --ntasks-per-node=1", "during", "", action, after, &p))
		return;
	CHECK_MSG(field_of(p.out, "rc=") == 0 && field_of(p.out, "n2_failed_after_its_report=") < 3000,
		  "%s ...%s", p.out, test_tail(p.err, 3000));
	CHECK_CONTAINS(p.err, "chexnet-elastic: lost n3; ranks 0,1 went on in their own processes");
	CHECK_CONTAINS(p.err, "chexnet: train: the ranks left could not start again: rank 1 (host n2) "
		       "never joined; OUT/last holds epoch 1, step ");
	CHECK_CONTAINS(p.err, "chexnet-elastic: lost n2; ranks 0 went on in their own processes");
	CHECK_CONTAINS(p.err, "chexnet: train: rank 0 of 2 goes on as rank 0 of 1 in the same "
		       "process: --accumulate 3 keeps the global batch (3 micro-batches per step, was "
		       "3)");
	CHECK_CONTAINS(p.err, "end of epoch 1/1 step ");
	check_steps_kept(p.err, 1);
	char *rec = record_of("during");
	CHECK_MSG(rec && strstr(rec, "\"3 -> 1\"") && strstr(rec, "\"1 -> 3\"") &&
		  !strstr(rec, "\"global_batch\":\t[") && strstr(rec, "\"outcome\":\t\"finished\""),
		  "run.json (3 -> 1 ranks, K 1 -> 3, the global batch kept): %.2500s", rec ? rec : "");
	free(rec);
	double params = same_parameters("during", "three", "a loss during recovery");
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured (a loss during recovery, 3 -> 1 ranks in-process): failure to the first "
	       "step after %ld ms; parameters %.3g from the uninterrupted 3-rank run\n",
	       field_of(p.out, "kill_to_step="), params);
	test_proc_free(&p);
}

/* The driver refuses, naming why, what it cannot keep going: a job
 * without --no-kill (Slurm would end it with the lost node), no --out,
 * tasks per node that differ between nodes. */
static void test_driver_refuses_a_job_it_cannot_keep_going(void)
{
	char cmd[4096];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && d='%s/contrib/chexnet-elastic'; c='%s/chexnet'; "
		 "sbatch --wait -N 1 -o a.log --wrap \"$d --hvd -- $c train --data x --out o\" > /dev/null; "
		 "echo a=$?; printf '#!/bin/sh\\n#SBATCH --no-kill\\nexec %%s -- %%s train --data x\\n' "
		 "\"$d\" \"$c\" > b.sh; sbatch --wait -N 1 -o b.log b.sh > /dev/null; echo b=$?; "
		 "\"$d\" -- \"$c\" train --out o 2>&1; echo c=$?; "
		 "sbatch --wait --no-kill -N 2 -w n1,n2 -n 3 -o d.log --wrap \"$d --assume-no-kill -- $c train --data x "
		 "--out o\" > /dev/null; echo d=$?; cat a.log b.log d.log",
		 test_tmpdir(), test_src_dir(), test_build_dir());
	if (sh(cmd, 60, &p))
		return;
	CHECK_CONTAINS(p.out, "a=2\n");
	CHECK_CONTAINS(p.out, "not submitted with --no-kill: Slurm would end the whole job");
	CHECK_CONTAINS(p.out, "b=2\n");
	CHECK_CONTAINS(p.out, "chexnet train needs --out DIR");
	CHECK_CONTAINS(p.out, "c=2\n");
	CHECK_CONTAINS(p.out, "not inside a Slurm allocation");
	CHECK_CONTAINS(p.out, "d=2\n");
	CHECK_CONTAINS(p.out, "tasks per node '2,1' differ between nodes");
	test_proc_free(&p);
}

/* What Slurm does to the ranks left when a whole node dies (slurmstepd
 * too, so no PMIx server reports a lost client): PMIx clients alone
 * (hvd-rt-test survive 0 S: nobody exits by itself) on n1 and n2, n2
 * failed once all four started. With --no-kill they live to the end and
 * srun exits 0 after `Node failure on n2`; without it Slurm cancels the
 * step once it declares n2 down (SlurmdTimeout 20 s here): the ranks on n1
 * are gone before their 60 s are up (a SIGTERM reached them in some runs,
 * not all; srun's status is no guide: it can exit 0; each task writes its
 * own file, as srun stops relaying output once the step is cancelled).
 * Prints when. */
static void test_a_lost_node_leaves_the_others_alive_with_no_kill(void)
{
	char cmd[4096], fail[1024], revive[1024];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd), "cp '%s/hvd-rt-test' '%s/' && cd '%s' && (" MN_IDLE_SH
		 "wait_idle 900; for k in no-kill kill; do : > $k.err; "
		 "s=60; o=; [ $k = no-kill ] && s=36 o=--no-kill; "
		 "srun $o -N 2 -w n1,n2 --ntasks-per-node=2 -o $k.%%t.out ./hvd-rt-test survive 0 $s "
		 "2> $k.err & j=$!; "
		 "for i in $(seq 300); do [ \"$(cat $k.*.out 2> /dev/null | grep -c '^pid')\" = 4 ] && break; "
		 "sleep 0.1; done; "
		 "t0=$(date +%%s); %s; wait $j; echo $k: rc=$? after=$(( $(date +%%s) - t0 )); %s; "
		 "wait_idle 900; cat $k.*.out $k.err; done; echo idle=$(idle)/$n)",
		 test_build_dir(), test_tmpdir(), test_tmpdir(), node_cmd(fail, sizeof(fail), "fail", "n2"),
		 node_cmd(revive, sizeof(revive), "revive", "n2"));
	if (sh(cmd, 200, &p))
		return;
	const char *with = strstr(p.out, "no-kill: rc="), *without = strstr(p.out, "\nkill: rc=");
	CHECK_MSG(with && without, "%s %s", p.out, p.err);
	if (!with || !without)
		goto out;
	char first[8192];
	snprintf(first, sizeof(first), "%.*s", (int)(without - with), with);
	CHECK_MSG(field_of(first, "rc=") == 0 && strstr(first, "alive 0") && strstr(first, "alive 1") &&
		  strstr(first, "Node failure on n2") && !strstr(first, "sigterm"), "with --no-kill: %s",
		  first);
	CHECK_MSG(strstr(without, "DUE TO NODE FAILURE") && !strstr(without, "alive 0") &&
		  !strstr(without, "alive 1"), "without: %.1500s", without);
	CHECK_CONTAINS(p.out, "idle=4/4");
	printf("  measured: with --no-kill n1's ranks lived on (srun exit 0 %ld s after the failure); "
	       "without, the step was cancelled and srun ended %ld s after the failure (%s)\n",
	       field_of(first, "after="), field_of(without, "after="),
	       strstr(without, "sigterm 0 at") ? "the ranks saw a SIGTERM" : "no SIGTERM seen");
out:
	test_proc_free(&p);
}

const struct test_case multinode_elastic_tests[] = {
	{ "driver_refuses_a_job_it_cannot_keep_going", test_driver_refuses_a_job_it_cannot_keep_going },
	{ "a_partition_or_a_late_survivor_leaves_one_writer",
	  test_a_partition_or_a_late_survivor_leaves_one_writer },
	{ "lost_node_or_stopped_rank_goes_on_with_the_same_global_batch",
	  test_lost_node_or_stopped_rank_goes_on_with_the_same_global_batch },
	{ "a_spare_node_joins_in_the_place_of_a_lost_one",
	  test_a_spare_node_joins_in_the_place_of_a_lost_one },
	{ "a_spare_that_never_joins_is_a_loss_like_any_other",
	  test_a_spare_that_never_joins_is_a_loss_like_any_other },
	{ "a_spare_takes_a_hung_ranks_node_by_a_relaunch",
	  test_a_spare_takes_a_hung_ranks_node_by_a_relaunch },
	{ "a_hung_node_woken_at_any_point_leaves_the_run_alone",
	  test_a_hung_node_woken_at_any_point_leaves_the_run_alone },
	{ "three_ranks_go_on_as_two_with_the_nearest_global_batch",
	  test_three_ranks_go_on_as_two_with_the_nearest_global_batch },
	{ "a_loss_during_recovery_is_a_loss_like_any_other",
	  test_a_loss_during_recovery_is_a_loss_like_any_other },
	{ 0 }
};

/* Slurm's own behaviour, hidden (run with -g): it does not change with
 * hvd's code, and it takes 70 s. */
const struct test_case multinode_node_loss_tests[] = {
	{ "a_lost_node_leaves_the_others_alive_with_no_kill",
	  test_a_lost_node_leaves_the_others_alive_with_no_kill },
	{ 0 }
};
