/* recover/survivors.c - the survivors' decision on who writes OUT/last and
 * who goes on (survivors.h): one small report per rank, written whole;
 * the decision one claim of the run folder's next generation
 * (base/fence.h), so there is only ever one.
 * What it does not do: decide that a peer was lost (train/peer_lost.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fence.h"
#include "base/whole_file.h"
#include "recover/survivors.h"
#include "recover/writer_beat.h"

static void path_of(char *buf, size_t len, const char *out, const char *name)
{
	snprintf(buf, len, "%s/" SURVIVORS_DIR "%s%s", out, name ? "/" : "", name ? name : "");
}

int survivors_reset(const char *out)
{
	char dir[4200], file[4400];
	path_of(dir, sizeof(dir), out, NULL);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
			unlink(file);
		}
	closedir(d);
	return rmdir(dir) == 0 || errno == ENOENT ? 0 : -1;
}

/* out/.survivors/name = text, whole or not at all; with loud, a failure
 * is said. */
static int put(const char *out, const char *name, const char *text, int loud)
{
	char dir[4200], final[4400];
	path_of(dir, sizeof(dir), out, NULL);
	snprintf(final, sizeof(final), "%s/%s", dir, name);
	if ((mkdir(dir, 0755) == 0 || errno == EEXIST) && whole_file_put(final, text, 0644) == 0)
		return 0;
	if (loud)
		fprintf(stderr, "chexnet: survivors: '%s': %s\n", final, strerror(errno));
	return -1;
}

int survivors_ranks_text(const int *ranks, int count, char *text, size_t len)
{
	size_t used = 0;
	text[0] = '\0';
	for (int i = 0; i < count; i++) {
		int n = snprintf(text + used, len - used, "%s%d", i ? "," : "", ranks[i]);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	return 0;
}

/* "0,1" into ranks: ascending ranks, at most max; their count, or -1. */
static int ranks_parse(const char *text, int *ranks, int max)
{
	int count = 0;
	for (const char *p = text;; p++) {
		char *end;
		long r = strtol(p, &end, 10);
		if (!isdigit((unsigned char)*p) || r > 1 << 30 || count == max ||
		    (count && r <= ranks[count - 1]) || (*end && *end != ','))
			return -1;
		ranks[count++] = (int)r;
		if (!*end)
			return count;
		p = end;
	}
}

/* One marker's rank and host, appended (a host list past its room, or
 * more than SURVIVORS_MAX members: left out, with a line). */
static void add_member(struct survivors_vote *v, long rank, const char *host)
{
	size_t h = strlen(v->hosts);
	int n = snprintf(v->hosts + h, sizeof(v->hosts) - h, "%s%s", h ? "," : "", host);
	if (v->count == SURVIVORS_MAX || n < 0 || (size_t)n >= sizeof(v->hosts) - h) {
		v->hosts[h] = '\0';
		fprintf(stderr, "chexnet: survivors: rank %ld (host %s) left out: more members than "
			"a decision holds (%d ranks, %zu characters of hosts)\n", rank, host,
			SURVIVORS_MAX, sizeof(v->hosts) - 1);
		return;
	}
	v->ranks[v->count++] = (int)rank;
}

static int in(const int *set, int n, long x)
{
	for (int i = 0; i < n; i++)
		if (set[i] == x)
			return 1;
	return 0;
}

/* Every marker of generation held, in rank order, but those of ranks named
 * lost, into v; the best (most steps, lowest rank) becomes the writer. */
static void read_markers(const char *out, long held, const int *lost, int lost_count,
			 struct survivors_vote *v)
{
	char dir[4200], file[4400], text[320], host[256];
	path_of(dir, sizeof(dir), out, NULL);
	v->count = 0;
	v->writer = -1;
	v->steps = -1;
	v->hosts[0] = '\0';
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, versionsort);
	for (int i = 0; i < n; i++) {
		char *end;
		long r = strtol(names[i]->d_name, &end, 10), s, g;
		snprintf(file, sizeof(file), "%s/%s", dir, names[i]->d_name);
		int numbered = end != names[i]->d_name && !*end && r >= 0 && !in(lost, lost_count, r);
		free(names[i]);
		FILE *f = numbered ? fopen(file, "re") : NULL;
		if (f && fgets(text, sizeof(text), f) &&
		    sscanf(text, "%ld %255s %ld", &s, host, &g) == 3 && g == held) {
			add_member(v, r, host);
			if (s > v->steps || (s == v->steps && r < v->writer)) {
				v->writer = (int)r;
				v->steps = s;
			}
		}
		if (f)
			fclose(f);
	}
	free(names);
}

/* This rank's place among the ranks not named lost (0: the leader). */
static int place(int rank, int world, const int *lost, int lost_count)
{
	int p = 0;
	for (int r = 0; r < rank && r < world; r++)
		p += !in(lost, lost_count, r);
	return p;
}

/* How long a view of the survivors waits before it may claim: at once
 * when it holds more than half of the world, or half with rank 0 (the
 * batch host's half, whose driver sees what happens); else
 * SURVIVORS_WAIT_S later, so that in a partition the other half's claim
 * comes first, and when that half is really gone this one still goes on. */
static double deference(int world, const int *lost, int lost_count)
{
	int left = world - lost_count;
	if (2 * left > world || (2 * left == world && !in(lost, lost_count, 0)))
		return 0;
	return SURVIVORS_WAIT_S;
}

/* 0 when rank is one of v's members, else 1. */
static int member_of(const struct survivors_vote *v, int rank)
{
	return !in(v->ranks, v->count, rank);
}

/* Generation g's decision into v: 1 read, 0 not there yet, -1 unreadable. */
static int read_decision(const char *out, long g, struct survivors_vote *v)
{
	char text[8192], members[4096];
	if (fence_read(out, g, text, sizeof(text)))
		return errno == ENOENT ? 0 : -1;
	memset(v, 0, sizeof(*v));
	v->generation = g;
	if (sscanf(text, "decision writer=%d steps=%ld count=%d members=%4095s hosts=%1023s",
		   &v->writer, &v->steps, &v->count, members, v->hosts) != 5 || v->count < 1 ||
	    ranks_parse(members, v->ranks, SURVIVORS_MAX) != v->count) {
		fprintf(stderr, "chexnet: survivors: '%s/%s/%ld': not a decision of the ranks left\n",
			out, FENCE_DIR, g);
		return -1;
	}
	return 1;
}

/* Decides v (the markers just read), claimed as generation g (another
 * claimant's decision wins). 0, or -1 (a line). */
static int decide(const char *out, long g, const struct survivors_vote *v, int rank,
		  const char *host)
{
	char text[8192], members[4096];
	if (survivors_ranks_text(v->ranks, v->count, members, sizeof(members))) {
		fprintf(stderr, "chexnet: survivors: %d members: too many for a decision\n", v->count);
		return -1;
	}
	snprintf(text, sizeof(text), "decision writer=%d steps=%ld count=%d members=%s hosts=%s "
		 "by=rank-%d@%s\n", v->writer, v->steps, v->count, members, v->hosts, rank, host);
	if (fence_claim(out, g, text) < 0) {
		fprintf(stderr, "chexnet: survivors: '%s/%s/%ld': cannot claim: %s\n", out, FENCE_DIR,
			g, strerror(errno));
		return -1;
	}
	return 0;
}

int survivors_decide(const char *out, long held, int rank, const char *host, int world,
		     const int *lost, int lost_count, long completed, struct survivors_vote *v)
{
	char name[32], text[320];
	int rc;
	snprintf(name, sizeof(name), "%d", rank);
	snprintf(text, sizeof(text), "%ld %s %ld\n", completed, host, held);
	/* too late to report (a slow node or file system): the decision was
	 * made without this rank, which writes nothing (its report may also
	 * fail as the members' next session clears the folder) */
	if ((rc = read_decision(out, held + 1, v)) == 0 && put(out, name, text, 0) &&
	    (rc = read_decision(out, held + 1, v)) == 0)
		rc = put(out, name, text, 1) ? -1 : 0;
	if (rc)
		return rc < 0 ? -1 : member_of(v, rank);
	int p = place(rank, world, lost, lost_count), expected = world - lost_count;
	double defer = deference(world, lost, lost_count);
	double t0 = now_seconds(), mine = defer + SURVIVORS_WAIT_S + SURVIVORS_STAGGER_S * p;
	while ((rc = read_decision(out, held + 1, v)) == 0) {
		double waited = now_seconds() - t0;
		int all_here = 0;
		if (p == 0 || waited >= mine) {   /* the leader decides once every survivor reported */
			read_markers(out, held, lost, lost_count, v);
			all_here = p == 0 && v->count >= expected && waited >= defer;
		}
		if (waited >= mine + SURVIVORS_SAVE_WAIT_S) {
			fprintf(stderr, "chexnet: survivors: '%s/%s/%ld': no decision readable within "
				"%.0f s\n", out, FENCE_DIR, held + 1, waited);
			return -1;
		}
		if (all_here || waited >= mine) {   /* a later one: in a silent leader's place */
			if (decide(out, held + 1, v, rank, host))
				return -1;
			continue;
		}
		usleep(50000);
	}
	return rc < 0 ? -1 : member_of(v, rank);
}

/* name in .survivors, and as G.name in .generations (G: the generation
 * this process holds), where it stays for the driver. */
static int put_record(const char *out, const char *name, const char *text)
{
	char dir[4200], path[4400];
	snprintf(dir, sizeof(dir), "%s/" FENCE_DIR, out);
	snprintf(path, sizeof(path), "%s/%ld.%s", dir, fence_held(), name);
	if (put(out, name, text, 1))
		return -1;
	if (fence_held() > 0 && ((mkdir(dir, 0755) && errno != EEXIST) ||
				 whole_file_put(path, text, 0644))) {
		fprintf(stderr, "chexnet: survivors: '%s': %s\n", path, whole_file_why(errno));
		return -1;
	}
	return 0;
}

int survivors_mark_saved(const char *out, const char *summary)
{
	char text[8192];
	if ((size_t)snprintf(text, sizeof(text), "%s\n", summary) >= sizeof(text)) {
		fprintf(stderr, "chexnet: survivors: a summary of %zu characters: too long\n",
			strlen(summary));
		return -1;
	}
	return put_record(out, "saved", text);
}

int survivors_mark_finished(const char *out)
{
	return put_record(out, "finished", "finished\n");
}

/* The summary in path: 1 with *s filled, 0 when there is none. */
static int read_summary(const char *path, struct survivors_saved *s)
{
	char line[8192], members[4096];
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : (fprintf(stderr, "chexnet: survivors: '%s': %s\n", path,
							    strerror(errno)), -1);
	int ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	memset(s, 0, sizeof(*s));
	char *who = strstr(line, " who="), *join = strstr(line, " joiners=");
	ok = ok && who && strlen(who + 5) < sizeof(s->who) &&
	     sscanf(line, "time=%31s hosts=%1023s epoch=%d step=%ld writer=%*d next=%15s "
		    "members=%4095s member_hosts=%1023s", s->time, s->hosts, &s->epoch, &s->step,
		    s->next, members, s->member_hosts) == 7 && s->epoch >= 0 && s->step >= 0 &&
	     (!strcmp(s->next, "in-process") || !strcmp(s->next, "relaunch")) &&
	     (s->member_count = ranks_parse(members, s->members, SURVIVORS_MAX)) > 0;
	if (ok && join && join < who)
		ok = sscanf(join, " joiners=%d join_nodes=%d", &s->joiners, &s->join_nodes) == 2 &&
		     s->joiners > 0 && s->join_nodes > 0 && s->join_nodes <= s->joiners &&
		     s->joiners <= 4096 && !strcmp(s->next, "in-process");
	if (!ok) {
		fprintf(stderr, "chexnet: survivors: '%s': not a summary of a lost peer\n", path);
		return -1;
	}
	snprintf(s->who, sizeof(s->who), "%s", who + 5);
	return 1;
}

int survivors_read_saved(const char *dir, struct survivors_saved *s)
{
	char path[4400];
	path_of(path, sizeof(path), dir, "saved");
	return read_summary(path, s);
}

int survivors_read_record(const char *out, long g, struct survivors_saved *s)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/" FENCE_DIR "/%ld.saved", out, g);
	return read_summary(path, s);
}

long survivors_accumulate(long want, int size, int *exact)
{
	*exact = want % size == 0;
	if (*exact)
		return want / size;
	long k = (2 * want + size) / (2 * size);
	return k > 0 ? k : 1;
}

int survivors_member(const struct survivors_saved *s, int old_rank, int *rank, int *size)
{
	*rank = -1;
	*size = s->member_count;
	for (int i = 0; i < s->member_count; i++)
		if (s->members[i] == old_rank)
			*rank = i;
	return *rank < 0 ? -1 : 0;
}

/* The summary of the decision this process holds: saved may still be an
 * older one's (a world that failed to form after the last decision). */
static void held_summary_path(char *buf, size_t len, const char *out)
{
	if (fence_held() > 0)
		snprintf(buf, len, "%s/" FENCE_DIR "/%ld.saved", out, fence_held());
	else
		path_of(buf, len, out, "saved");
}

int survivors_read_held(const char *out, struct survivors_saved *s)
{
	char path[4400];
	held_summary_path(path, sizeof(path), out);
	return read_summary(path, s);
}

int survivors_wait_saved(const char *out, double limit_s, double silent_s)
{
	char file[4400], beat[640] = "", seen[640] = "";
	held_summary_path(file, sizeof(file), out);
	double t0 = now_seconds(), changed = t0;
	for (double now = t0; now - t0 < limit_s; usleep(50000), now = now_seconds()) {
		if (access(file, F_OK) == 0)
			return 0;
		writer_beat_read(out, fence_held(), beat, sizeof(beat));
		if (strcmp(beat, seen)) {
			snprintf(seen, sizeof(seen), "%s", beat);
			changed = now;
		} else if (now - changed >= silent_s) {
			fprintf(stderr, "chexnet: survivors: '%s/%s/%ld.writing': %s%s%s for %.0f s: the "
				"survivor chosen to write OUT/last is taken as lost\n", out, FENCE_DIR,
				fence_held(), seen[0] ? "the writer (" : "no sign of the writer", seen,
				seen[0] ? ") showed no progress" : "", now - changed);
			return -1;
		}
	}
	fprintf(stderr, "chexnet: survivors: '%s': not written within %.0f s (the larger of %.0f s "
		"and the checkpoint at %.0f MiB/s), though the writer (%s) was alive\n", file, limit_s,
		SURVIVORS_SAVE_WAIT_S, WRITER_SLOWEST_BYTES_PER_S / (1024 * 1024), seen);
	return -1;
}
