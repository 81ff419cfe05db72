/* test_runtime_attack.c - the control plane under attack on the real
 * one-node cluster: tests/slurm/attack.sh runs a 2-rank job as root while
 * build/hvd-attack, as `nobody`, connects to rank 0's port during start-up
 * (rank 1's connect to that port is held, past the PMIx fence, until rank
 * 0 has dropped the attacker: build/hvd-record.so) and stays silent, claims rank 1 without the secret, sends the old
 * protocol's HELLO + ERROR, replays a real rank's recorded handshake,
 * floods SUBMIT frames, or holds 300 connections. Each case checks that
 * the attacker's connection was accepted and then dropped (the attacker
 * saw the server close it, and rank 0 logged the drop where the attacker
 * sent anything), that the job exited 0 and that its checksum equals an
 * unattacked run's. The leak case checks that no file `nobody` can read
 * on the node holds the job secret.
 * What it does not do: time anything beyond the deadlines that catch hangs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static char *slurp(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char *checksum_of(const char *out)
{
	const char *c = strstr(out, "checksum ");
	return c ? c : "(none)";
}

static int run_attack(const char *mode, char *dir, size_t len)
{
	snprintf(dir, len, "%s/attack", test_tmpdir());
	char *cmd = NULL;
	if (asprintf(&cmd, "'%s/tests/slurm/attack.sh' '%s' '%s' %s", test_src_dir(),
		     test_build_dir(), dir, mode) < 0)
		return -1;
	struct test_proc p;
	int rc = test_run(cmd, 280, &p);
	free(cmd);
	if (rc == 0 && p.exit_code != 0)
		CHECK_MSG(0, "attack.sh %s: exit %d: %.600s", mode, p.exit_code, p.err);
	test_proc_free(&p);
	return rc;
}

/* The job finished as if unattacked; the attacker was accepted, then dropped. */
static void attack_case(const char *mode, const char *logged)
{
	char dir[4200];
	CHECK_INT(run_attack(mode, dir, sizeof(dir)), 0);
	char *ref = slurp(dir, "ref.out"), *out = slurp(dir, "job.out"), *err = slurp(dir, "job.err");
	char *atk = slurp(dir, "attack.out"), *atk_rc = slurp(dir, "attack.rc");
	char *rc = slurp(dir, "job.rc"), *ref_rc = slurp(dir, "ref.rc");
	CHECK_MSG(!strcmp(ref_rc, "0\n"), "unattacked run: rc %s", ref_rc);
	CHECK_MSG(!strcmp(rc, "0\n"), "%s: job rc '%s'; stderr: %.1500s", mode, rc, err);
	CHECK_CONTAINS(ref, "checksum ");
	CHECK_MSG(!strcmp(checksum_of(ref), checksum_of(out)), "%s: result %.40s vs unattacked %.40s",
		  mode, checksum_of(out), checksum_of(ref));
	CHECK_MSG(strstr(atk, "\nsent\n") || !strncmp(atk, "sent\n", 5) || strstr(atk, "connected\nsent"),
		  "%s: the attacker never got its attack in: %.400s", mode, atk);
	CHECK_MSG(strstr(atk, "refused: ") && !strcmp(atk_rc, "0\n"),
		  "%s: the attacker was not dropped: %.600s", mode, atk);
	if (logged)
		CHECK_MSG(strstr(err, logged) != NULL, "%s: no '%s' in rank 0's stderr: %.1500s",
			  mode, logged, err);
	CHECK(strstr(err, "\x1b") == NULL); /* no attacker text reached a terminal */
	CHECK(strstr(err, "pwned") == NULL);
	free(ref); free(out); free(err); free(atk); free(atk_rc); free(rc); free(ref_rc);
}

static void test_silent_connection_costs_nothing(void)
{
	attack_case("silent", "failed authentication (no proof within 5 s): dropped");
}

static void test_claiming_a_rank_without_the_secret_is_dropped(void)
{
	attack_case("claim", "failed authentication: dropped");
}

static void test_error_frame_from_a_stranger_is_dropped(void)
{
	attack_case("error", "failed authentication (not an hvd handshake): dropped");
}

static void test_replayed_handshake_is_dropped(void)
{
	char dir[4200];
	attack_case("replay", "failed authentication: dropped");
	snprintf(dir, sizeof(dir), "%s/attack", test_tmpdir());
	char *atk = slurp(dir, "attack.out");
	CHECK_CONTAINS(atk, "replayed 88 bytes"); /* a real HELLO + PROOF */
	free(atk);
}

static void test_submit_flood_is_dropped(void)
{
	attack_case("flood", "failed authentication (not an hvd handshake): dropped");
}

static void test_300_held_connections_are_dropped(void)
{
	attack_case("hold", "failed authentication");
}

static void test_secret_is_unreadable_by_other_users(void)
{
	char dir[4200];
	CHECK_INT(run_attack("leak", dir, sizeof(dir)), 0);
	char *scan = slurp(dir, "scan.out"), *rc = slurp(dir, "scan.rc"), *n = slurp(dir, "scan.values");
	char *job = slurp(dir, "job.rc"), *err = slurp(dir, "job.err");
	CHECK_MSG(atoi(n) >= 1, "no getrandom result recorded (the secret): %s", n);
	CHECK_MSG(!strcmp(rc, "0\n"), "a file readable by nobody holds the secret: %.1500s", scan);
	CHECK_CONTAINS(scan, "scan: ");
	CHECK_MSG(!strcmp(job, "0\n"), "job rc %s: %.800s", job, err);
	free(scan); free(rc); free(n); free(job); free(err);
}

const struct test_case runtime_attack_tests[] = {
	{ "silent_connection_costs_nothing", test_silent_connection_costs_nothing },
	{ "claiming_a_rank_without_the_secret_is_dropped", test_claiming_a_rank_without_the_secret_is_dropped },
	{ "error_frame_from_a_stranger_is_dropped", test_error_frame_from_a_stranger_is_dropped },
	{ "replayed_handshake_is_dropped", test_replayed_handshake_is_dropped },
	{ "submit_flood_is_dropped", test_submit_flood_is_dropped },
	{ "300_held_connections_are_dropped", test_300_held_connections_are_dropped },
	{ "secret_is_unreadable_by_other_users", test_secret_is_unreadable_by_other_users },
	{ 0 }
};
