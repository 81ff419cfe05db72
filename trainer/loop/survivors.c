/* loop/survivors.c - the survivors' agreement on who writes OUT/last
 * (survivors.h): one small file per rank, written to a temporary name,
 * fsynced and renamed, so a reader sees all of it or nothing.
 * What it does not do: decide that a peer was lost (train/peer_lost.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/whole_file.h"
#include "loop/survivors.h"

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

/* out/.survivors/name = text, whole or not at all. */
static int put(const char *out, const char *name, const char *text)
{
	char dir[4200], final[4400];
	path_of(dir, sizeof(dir), out, NULL);
	snprintf(final, sizeof(final), "%s/%s", dir, name);
	if ((mkdir(dir, 0755) == 0 || errno == EEXIST) && whole_file_put(final, text, 0644) == 0)
		return 0;
	fprintf(stderr, "chexnet: survivors: '%s': %s\n", final, strerror(errno));
	return -1;
}

/* One marker's rank list and host list entry, appended. */
static void add_member(struct survivors_vote *v, long rank, const char *host)
{
	size_t r = strlen(v->ranks), h = strlen(v->hosts);
	snprintf(v->ranks + r, sizeof(v->ranks) - r, "%s%ld", r ? "," : "", rank);
	snprintf(v->hosts + h, sizeof(v->hosts) - h, "%s%s", h ? "," : "", host);
	v->count++;
}

/* Every marker, in rank order, into v; the best (most steps, lowest rank)
 * becomes the writer. */
static void read_markers(const char *out, struct survivors_vote *v)
{
	char dir[4200], file[4400], text[320], host[256];
	path_of(dir, sizeof(dir), out, NULL);
	v->count = 0;
	v->ranks[0] = v->hosts[0] = '\0';
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, versionsort);
	for (int i = 0; i < n; i++) {
		char *end;
		long r = strtol(names[i]->d_name, &end, 10), s;
		snprintf(file, sizeof(file), "%s/%s", dir, names[i]->d_name);
		int numbered = end != names[i]->d_name && !*end && r >= 0;
		free(names[i]);
		FILE *f = numbered ? fopen(file, "re") : NULL;
		if (f && fgets(text, sizeof(text), f) && sscanf(text, "%ld %255s", &s, host) == 2) {
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

int survivors_choose(const char *out, int rank, const char *host, int expected, long completed,
		     struct survivors_vote *v)
{
	char name[32], text[320];
	snprintf(name, sizeof(name), "%d", rank);
	snprintf(text, sizeof(text), "%ld %s\n", completed, host);
	if (put(out, name, text))
		return -1;
	double t0 = now_seconds();
	do {
		v->writer = rank, v->steps = completed;
		read_markers(out, v);
		if (v->count >= expected)
			break;
		usleep(50000);
	} while (now_seconds() - t0 < SURVIVORS_WAIT_S);
	return 0;
}

int survivors_mark_saved(const char *out, const char *summary)
{
	char text[2048];
	snprintf(text, sizeof(text), "%s\n", summary);
	return put(out, "saved", text);
}

int survivors_mark_finished(const char *out)
{
	return put(out, "finished", "finished\n");
}

int survivors_read_saved(const char *dir, struct survivors_saved *s)
{
	char path[4400], line[4096];
	path_of(path, sizeof(path), dir, "saved");
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : (fprintf(stderr, "chexnet: survivors: '%s': %s\n", path,
							    strerror(errno)), -1);
	int ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	memset(s, 0, sizeof(*s));
	const char *who = strstr(line, " who=");
	ok = ok && who && strlen(who + 5) < sizeof(s->who) &&
	     sscanf(line, "time=%31s hosts=%1023s ranks=%d accumulate=%d epoch=%d step=%ld writer=%*d "
		    "next=%15s members=%1023s", s->time, s->hosts, &s->ranks, &s->accumulate,
		    &s->epoch, &s->step, s->next, s->members) == 8 &&
	     s->ranks > 1 && s->accumulate > 0 && s->epoch >= 0 && s->step >= 0 &&
	     (!strcmp(s->next, "in-process") || !strcmp(s->next, "relaunch"));
	if (!ok) {
		fprintf(stderr, "chexnet: survivors: '%s': not a summary of a lost peer\n", path);
		return -1;
	}
	snprintf(s->who, sizeof(s->who), "%s", who + 5);
	return 1;
}

long survivors_accumulate(const struct survivors_saved *s, int size, int *exact)
{
	long want = (long)s->ranks * s->accumulate;
	*exact = want % size == 0;
	if (*exact)
		return want / size;
	long k = (2 * want + size) / (2 * size);
	return k > 0 ? k : 1;
}

int survivors_member(const struct survivors_saved *s, int old_rank, int *rank, int *size)
{
	*rank = -1;
	*size = 0;
	for (const char *p = s->members; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != '\0')) {
		if (atoi(p) == old_rank)
			*rank = *size;
		++*size;
	}
	return *rank < 0 ? -1 : 0;
}

int survivors_wait_saved(const char *out, double timeout_s)
{
	char file[4400];
	path_of(file, sizeof(file), out, "saved");
	for (double t0 = now_seconds(); now_seconds() - t0 < timeout_s; usleep(50000))
		if (access(file, F_OK) == 0)
			return 0;
	fprintf(stderr, "chexnet: survivors: '%s': not written within %.1f s: the survivor chosen "
		"to write OUT/last did not finish\n", file, timeout_s);
	return -1;
}
