/* cmd/go_on.c - the next session's settings after a lost peer (go_on.h).
 * What it does not do: start the runtime (cmd/train.c does, in the world
 * recover/rejoin.c describes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fence.h"
#include "cmd/go_on.h"
#include "train/dist.h"
#include "train/peer_lost.h"
#include "recover/rejoin.h"

/* next = run, resumed in OUT: how the run started (--init, --overwrite,
 * --relaunch) is over. */
static void continued(const struct settings *run, struct settings *next)
{
	*next = *run;
	next->train.resume = next->train.out ? next->train.out : next->train.resume;
	next->train.init = NULL;
	next->train.overwrite = 0;
	next->relaunch = 0;
	next->given[settings_index(SETTING_OF(train.init))] = 0;
	next->given[settings_index(SETTING_OF(train.overwrite))] = 0;
	next->given[settings_index(SETTING_OF(relaunch))] = 0;
}

/* next = run continued with --accumulate k (and --allow-changes when k
 * does not keep the target), a world joined once not joined again: 0, or
 * -1 (a line). */
static int resumed(const struct settings *run, long k, int exact, struct settings *next)
{
	struct trainer_error err = { "" };

	continued(run, next);
	next->join = 0;
	next->given[settings_index(SETTING_OF(join))] = 0;
	if (settings_set_long(next, SETTING_OF(train.accumulate), k, 1, &err) ||
	    (!exact && settings_set(next, SETTING_OF(train.allow_changes), NULL, 1, &err)))
		return fprintf(stderr, "chexnet: train: %s\n", err.msg), -1;
	return 0;
}

int go_on_relaunch(const struct settings *given, struct settings *next)
{
	if (!given->train.out || given->train.resume) {
		fprintf(stderr, "chexnet: train: --relaunch: needs the run's own command line, with "
			"--out DIR and without --resume\n");
		return 2;
	}
	continued(given, next);   /* a spare's ranks keep their --join G */
	next->given[settings_index(SETTING_OF(train.accumulate))] = 0;   /* the record's, kept */
	return 0;
}

int go_on_in_process(const struct settings *run, long *target, struct rejoined *r,
		     struct settings *next)
{
	struct survivors_saved s;
	int rank, size, exact;
	int old = r->formed ? dist_rank() : r->rank, old_size = r->formed ? dist_size() : r->size;

	if (survivors_read_held(run->train.out, &s) != 1 || strcmp(s.next, "in-process") ||
	    survivors_member(&s, old, &rank, &size))
		return CHEXNET_EXIT_PEER_LOST;
	size += s.joiners;
	r->rank = rank;
	r->size = size;
	r->saved = s;
	dist_release();   /* the broken runtime: its failure was said */
	long want = *target ? *target : (long)old_size * run->train.accumulate;
	long k = survivors_accumulate(want, size, &exact);
	*target = want;
	if (resumed(run, k, exact, next))
		return CHEXNET_EXIT_PEER_LOST;
	next->train.spares = run->train.spares > s.join_nodes ? run->train.spares - s.join_nodes : 0;
	struct rejoin_terms terms = { fence_held(), size, k, want };
	int late = rejoin_prepare(run->train.out, rank, &terms, &r->world);
	if (late == 1) {
		fprintf(stderr, "chexnet: train: rank %d of %d: generation %ld went on without it (it came "
			"too late to its world): OUT left alone\n", old, old_size, fence_held());
		return GO_ON_WITHOUT_IT;
	}
	if (late)
		return CHEXNET_EXIT_PEER_LOST;
	char joining[64] = "";
	if (s.joiners)
		snprintf(joining, sizeof(joining), ", %d rank(s) of spare nodes joining", s.joiners);
	if (rank == 0)
		fprintf(stderr, "chexnet: train: rank %d of %d goes on as rank %d of %d in the same "
			"process%s: --accumulate %ld %s (%ld micro-batches per step, was %ld)\n", old,
			old_size, rank, size, joining, k, exact ? "keeps the global batch"
			: "gives the nearest global batch (--allow-changes)", k * size, want);
	return 0;
}

/* SLURM_PROCID of a spare's srun step: this rank's place among the
 * joiners (0 without one: a single joiner), or -1. */
static int joiner_index(int joiners)
{
	const char *id = getenv("SLURM_PROCID");
	char *end;
	long i = id ? strtol(id, &end, 10) : 0;
	return id && (*end || end == id) ? -1 : i >= 0 && i < joiners ? (int)i : -1;
}

/* A joiner's place (index) in generation g's world, claimed once in
 * OUT/.generations/G.join-INDEX: a second joiner for it (a driver's or a
 * user's second --join) is refused alone, before it reaches the world,
 * which it would fail as a duplicate rank. 0, or -1 (a line). */
static int claim_place(const char *out, long g, int index)
{
	char name[64], text[320], host[256] = "host";
	gethostname(host, sizeof(host) - 1);
	snprintf(name, sizeof(name), "%ld.join-%d", g, index);
	snprintf(text, sizeof(text), "joiner %d of generation %ld: %s pid %ld\n", index, g, host,
		 (long)getpid());
	int rc = fence_claim_name(out, name, text);
	if (rc == 0)
		return 0;
	if (rc == 1) {
		char who[320] = "";
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s/%s", out, FENCE_DIR, name);
		FILE *f = fopen(path, "re");
		if (f && fgets(who, sizeof(who), f))
			who[strcspn(who, "\n")] = '\0';
		if (f)
			fclose(f);
		fprintf(stderr, "chexnet: train: --join %ld: '%s': joiner %d of this world was taken "
			"already (%s): refused, the world left alone\n", g, path, index, who);
	} else {
		fprintf(stderr, "chexnet: train: --join %ld: '%s/%s/%s': cannot claim: %s\n", g, out,
			FENCE_DIR, name, strerror(errno));
	}
	return -1;
}

int go_on_join(const struct settings *given, long *target, struct rejoined *r,
	       struct settings *next)
{
	const char *out = given->train.resume;
	struct rejoin_terms terms;
	struct survivors_saved s;
	int members, ignored, exact;

	if (!out || !given->train.shrink) {
		fprintf(stderr, "chexnet: train: --join: needs --resume DIR and --shrink\n");
		return 2;
	}
	if (survivors_read_record(out, given->join, &s) != 1 || !s.joiners) {
		fprintf(stderr, "chexnet: train: --join %ld: '%s/%s/%ld.saved': no summary of the "
			"ranks left that takes spares' ranks\n", given->join, out, FENCE_DIR, given->join);
		return 1;
	}
	survivors_member(&s, -1, &ignored, &members);
	int index = joiner_index(s.joiners);
	if (index < 0) {
		fprintf(stderr, "chexnet: train: --join %ld: SLURM_PROCID '%s': not one of the %d "
			"joining ranks\n", given->join, getenv("SLURM_PROCID"), s.joiners);
		return 1;
	}
	if (claim_place(out, given->join, index))
		return 1;
	fence_hold(out, given->join);
	if (rejoin_read_terms(out, given->join, &terms))
		return 1;
	survivors_accumulate(terms.target, terms.size, &exact);
	*r = (struct rejoined){ .rank = members + index, .size = terms.size, .saved = s };
	*target = terms.target;
	if (terms.size != members + s.joiners || resumed(given, terms.accumulate, exact, next)) {
		fprintf(stderr, "chexnet: train: --join %ld: a world of %d ranks, not %d members and "
			"%d joining\n", given->join, terms.size, members, s.joiners);
		return 1;
	}
	next->train.spares = given->train.spares;
	if (rejoin_prepare(out, r->rank, &terms, &r->world))
		return 1;
	fprintf(stderr, "chexnet: train: a spare's rank joins the run in '%s' as rank %d of %d "
		"(generation %ld, in the place of host(s) %s)\n", out, r->rank, terms.size,
		given->join, s.hosts);
	return 0;
}
