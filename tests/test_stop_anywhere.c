/* test_stop_anywhere.c - SIGTERM where the loop used to ignore it (issue
 * 19): during train's validation (exit 75, OUT/last with the trained
 * weights, and --resume redoing that validation gives the same final
 * checkpoint, byte for byte, as an uninterrupted run) and during `chexnet
 * eval` (ends within 10 s, exit 75, a line saying it was interrupted).
 * The signal is sent when the line printed just before the phase
 * appears; the phase is made long enough (32 validation images at 128
 * px) that it lands inside it.
 * SIGINT (Ctrl-C) in a run given no --out: kept in runs/STAMP, stopped
 * like SIGTERM, resumed; a second SIGINT exits 130 at once.
 * What it does not test: stops between steps (test_train_dist.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define RUN "train --synthetic --synthetic-images 16 --batch 16 --size 128 --threads 1 " \
	"--optimizer sgd --lr 0.05 --epochs 2 --progress-every 1"

static void chexnet(const char *args, int timeout_s, struct test_proc *p)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' %s", test_tmpdir(), test_build_dir(), args);
	CHECK(test_run(cmd, timeout_s, p) == 0);
}

/* Runs args, sends SIGTERM once `mark` shows on its stderr; p->out gets
 * "rc=N secs=S" (S: seconds from the signal to the exit). */
static void chexnet_term_at(const char *args, const char *mark, struct test_proc *p)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s' && ('%s/chexnet' %s 2> err.txt & c=$!; "
		 "for i in $(seq 1200); do grep -q '%s' err.txt && break; sleep 0.05; done; "
		 "kill -TERM $c; t0=$(date +%%s); wait $c; echo rc=$? secs=$(( $(date +%%s) - t0 )); "
		 "cat err.txt >&2)", test_tmpdir(), test_build_dir(), args, mark);
	CHECK(test_run(cmd, 300, p) == 0);
}

static void test_sigterm_in_validation_resumes_exactly(void)
{
	struct test_proc p;

	chexnet(RUN " --out whole", 300, &p);
	CHECK_MSG(p.exit_code == 0, "uninterrupted: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	chexnet_term_at(RUN " --out cut", "end of epoch 1/2", &p);
	CHECK_CONTAINS(p.out, "rc=75");
	CHECK_CONTAINS(p.err, "chexnet: SIGTERM: stopped during the validation of epoch 1, "
		       "checkpoint cut/last written");
	CHECK(!strstr(p.err, "chexnet: epoch 1: validation loss"));
	test_proc_free(&p);
	chexnet(RUN " --out cut --resume cut", 300, &p);
	CHECK_MSG(p.exit_code == 0, "resumed: exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "chexnet: epoch 1: validation loss");  /* redone */
	CHECK_CONTAINS(p.err, "end of epoch 2/2");
	test_proc_free(&p);
	test_same_file("cut/last/model.safetensors", "whole/last/model.safetensors");
	test_same_file("cut/last/training.safetensors", "whole/last/training.safetensors");
	test_same_file("cut/best/model.safetensors", "whole/best/model.safetensors");
}

static void test_sigterm_ends_eval_within_10s(void)
{
	struct test_proc p;

	chexnet("train --synthetic --synthetic-images 16 --batch 16 --size 128 --threads 1 "
		"--quiet --out ck", 300, &p);
	CHECK_MSG(p.exit_code == 0, "train: exit %d: %.600s", p.exit_code, p.err);
	test_proc_free(&p);
	chexnet_term_at("eval --checkpoint ck/last --synthetic --batch 16 --size 128 --threads 1",
			"parameters", &p);
	CHECK_CONTAINS(p.out, "rc=75");
	CHECK_CONTAINS(p.err, "chexnet: eval: interrupted (SIGTERM): no result; exit 75");
	int secs = 99;
	const char *s = strstr(p.out, "secs=");
	if (s)
		secs = atoi(s + 5);
	CHECK_MSG(secs <= 10, "eval took %d s to stop", secs);
	test_proc_free(&p);
}

/* Runs chexnet args in the background (bash with job control, so
 * SIGINT is not ignored as in a plain shell's background job), sends
 * `kills` (e.g. "kill -INT $c") once "step 2/8" shows on its stderr;
 * p->out gets "rc=N" and the name of runs/ *-2, p->err its stderr. */
static void chexnet_interrupt(const char *args, const char *kills, struct test_proc *p)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f err.txt && B='%s' bash -c 'set -m; "
		 "\"$B/chexnet\" %s 2> err.txt & c=$!; for i in $(seq 1200); do "
		 "grep -q \"step 2/8\" err.txt && break; sleep 0.05; done; %s; wait $c; "
		 "echo rc=$?; cat err.txt >&2; ls -d runs/*-2'", test_tmpdir(), test_build_dir(), args,
		 kills);
	CHECK(test_run(cmd, 300, p) == 0);
}

/* `train` with no --out keeps its run in runs/STAMP (a taken name gets
 * -2); the first SIGINT (Ctrl-C) stops like SIGTERM: checkpoint, exit 75,
 * how to resume, run.json's end record; the resumed run finishes; two
 * SIGINTs exit 130 at once. */
static void test_sigint_stops_a_run_kept_without_out(void)
{
	struct test_proc p;
	const char *small = "train --synthetic --synthetic-images 64 --batch 8 --size 32 --threads 1 "
			    "--epochs 2 --progress-every 1";
	char cmd[4096];

	/* every name of the next seconds taken: the run gets STAMP-2 */
	snprintf(cmd, sizeof(cmd), "cd '%s' && mkdir runs && for i in 0 1 2 3 4 5 6 7 8 9; do "
		 "mkdir runs/$(date -d \"+$i seconds\" +%%Y%%m%%d-%%H%%M%%S); done", test_tmpdir());
	CHECK(test_run(cmd, 30, &p) == 0 && p.exit_code == 0);
	test_proc_free(&p);
	chexnet_interrupt(small, "kill -INT $c", &p);
	CHECK_CONTAINS(p.out, "rc=75");
	CHECK_CONTAINS(p.err, "chexnet: train: no --out: the run is kept in 'runs/");
	CHECK_CONTAINS(p.err, "chexnet: SIGINT: stopped at epoch 1 step ");
	CHECK_CONTAINS(p.err, "/last written; exit 75 (continue with --resume runs/");
	char run[256] = "";
	sscanf(strstr(p.out, "runs/") ? strstr(p.out, "runs/") : "", "%255s", run);
	test_proc_free(&p);
	CHECK_MSG(run[0], "no runs/STAMP-2");
	char path[512], *text;
	snprintf(path, sizeof(path), "%s/%s/run.json", test_tmpdir(), run);
	text = test_read_file(path, NULL);
	CHECK_CONTAINS(text, "\"outcome\":\t\"stopped\"");
	CHECK_CONTAINS(text, "\"reason\":\t\"SIGINT\"");
	free(text);
	snprintf(cmd, sizeof(cmd), "%s --resume %s", small, run);
	chexnet(cmd, 300, &p);
	CHECK_MSG(p.exit_code == 0, "resumed: exit %d: %.600s", p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "chexnet: epoch 1: best/ written: validation loss ");
	CHECK_CONTAINS(p.err, "(best/ is chosen by validation loss)");
	CHECK_CONTAINS(p.err, "chexnet: train: the run is kept in 'runs/");
	test_proc_free(&p);
	text = test_read_file(path, NULL);
	CHECK_CONTAINS(text, "\"outcome\":\t\"finished\"");
	CHECK_CONTAINS(text, "\"steps\":\t16");
	free(text);
	/* the second SIGINT while the first one's checkpoint is being written,
	 * held there by tests/stall_shim.c: a second SIGINT 0.1 s after the
	 * first found a small run already past its checkpoint (fresh-clone make
	 * check) */
	snprintf(cmd, sizeof(cmd), "cd '%s' && cc -shared -fPIC -O1 -o shim.so '%s/tests/stall_shim.c' -ldl && "
		 "rm -f err.txt && B='%s' bash -c 'set -m; LD_PRELOAD=$PWD/shim.so "
		 "ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" HVD_STALL_PATH=last.tmp- "
		 "\"$B/chexnet\" %s 2> err.txt & c=$!; for i in $(seq 1200); do grep -q \"step 2/8\" "
		 "err.txt && break; sleep 0.05; done; kill -INT $c; for i in $(seq 1200); do grep -q "
		 "\"SIGINT: stopping\" err.txt && break; sleep 0.05; done; sleep 1; kill -INT $c; "
		 "wait $c; echo rc=$?; cat err.txt >&2'", test_tmpdir(), test_src_dir(),
		 test_build_dir(), small);
	CHECK(test_run(cmd, 300, &p) == 0);
	CHECK_CONTAINS(p.out, "rc=130");
	CHECK_CONTAINS(p.err, "chexnet: SIGINT again: exit 130 at once, no checkpoint");
	test_proc_free(&p);
}

const struct test_case stop_anywhere_tests[] = {
	{ "sigterm_in_validation_resumes_exactly", test_sigterm_in_validation_resumes_exactly },
	{ "sigterm_ends_eval_within_10s", test_sigterm_ends_eval_within_10s },
	{ "sigint_stops_a_run_kept_without_out", test_sigint_stops_a_run_kept_without_out },
	{ 0 }
};
