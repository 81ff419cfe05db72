/* run_times.c - see run_times.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_times.h"

#define MAX_GROUPS 256
#define SLOWEST 10

static struct {
	const char *const *names;
	int count, done, current, drawn, tty;
	double t0, group_t0;
	double last[MAX_GROUPS];     /* the previous run's seconds, or -1 */
	double took[MAX_GROUPS];     /* this run's, or -1 while not done */
	char beside[MAX_GROUPS];     /* running beside the others: not in the estimate */
	char file[4200];
} T;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void read_last(void)
{
	FILE *f = fopen(T.file, "re");
	char name[256];
	double s;

	for (int i = 0; i < T.count; i++)
		T.last[i] = -1;
	while (f && fscanf(f, "%lf %255s", &s, name) == 2)
		for (int i = 0; i < T.count; i++)
			if (!strcmp(T.names[i], name))
				T.last[i] = s;
	if (f)
		fclose(f);
}

void run_times_begin(const char *build, const char *const *names, int count)
{
	T.names = names;
	T.count = count < MAX_GROUPS ? count : MAX_GROUPS;
	for (int i = 0; i < T.count; i++)
		T.took[i] = -1, T.beside[i] = 0;
	T.tty = isatty(1);
	T.t0 = T.group_t0 = now();
	T.current = -1;
	snprintf(T.file, sizeof(T.file), "%s/check-times", build);
	read_last();
}

/* The first group named name not done yet, or -1. */
static int find(const char *name)
{
	for (int i = 0; i < T.count; i++)
		if (T.took[i] < 0 && !strcmp(T.names[i], name))
			return i;
	return -1;
}

/* Seconds the groups not done yet should still take, one after another
 * (a group beside the others is not counted: it overlaps them). */
static double left_s(void)
{
	double mean = 0, left = 0;
	int n = 0;

	for (int i = 0; i < T.count; i++)
		if (T.took[i] >= 0 && !T.beside[i])
			mean += T.took[i], n++;
	mean = n ? mean / n : 0;
	for (int i = 0; i < T.count; i++) {
		if (T.took[i] >= 0 || T.beside[i])
			continue;
		double g = T.last[i] >= 0 ? T.last[i] : mean;
		if (i == T.current)
			g = g > now() - T.group_t0 ? g - (now() - T.group_t0) : 0;
		left += g;
	}
	return left;
}

/* "group N/M, ..." for group n (counted from 1). */
static void where(int n, char *buf, int len)
{
	int e = (int)(now() - T.t0 + 0.5), l = (int)(left_s() + 0.5);
	snprintf(buf, (size_t)len, "group %d/%d, %d:%02d elapsed, about %d:%02d left", n, T.count,
		 e / 60, e % 60, l / 60, l % 60);
}

void run_times_draw(void)
{
	char line[160];

	if (!T.tty || T.current < 0 || T.current >= T.count || T.took[T.current] >= 0)
		return;
	where(T.done + 1, line, sizeof(line));
	printf("\r\033[K[%s: %s]", line, T.names[T.current]);
	fflush(stdout);
	T.drawn = 1;
}

void run_times_erase(void)
{
	if (!T.drawn)
		return;
	printf("\r\033[K");
	fflush(stdout);
	T.drawn = 0;
}

void run_times_group_start(const char *name)
{
	T.current = find(name);
	T.group_t0 = now();
}

void run_times_beside(const char *name)
{
	int i = find(name);
	if (i >= 0)
		T.beside[i] = 1;
}

void run_times_group_done(const char *name, double seconds, char *buf, int len)
{
	int i = find(name);
	if (i >= 0) {
		T.took[i] = seconds;
		T.done++;
	}
	char w[160];
	where(T.done, w, sizeof(w));
	snprintf(buf, (size_t)len, " (%s)", w);
}

static int slower(const void *a, const void *b)
{
	double x = T.took[*(const int *)a], y = T.took[*(const int *)b];
	return x < y ? 1 : x > y ? -1 : 0;
}

void run_times_finish(int whole_run)
{
	int order[MAX_GROUPS], n = 0;

	run_times_erase();
	for (int i = 0; i < T.count; i++)
		if (T.took[i] >= 0)
			order[n++] = i;
	qsort(order, (size_t)n, sizeof(order[0]), slower);
	printf("-- the %d slowest groups:\n", n < SLOWEST ? n : SLOWEST);
	for (int i = 0; i < n && i < SLOWEST; i++)
		printf("--   %7.1f s  %s%s\n", T.took[order[i]], T.names[order[i]],
		       T.beside[order[i]] ? " (beside the others)" : "");
	if (!whole_run || T.done < T.count)
		return;
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", T.file, (long)getpid());
	FILE *f = fopen(tmp, "we");
	for (int i = 0; f && i < T.count; i++)
		fprintf(f, "%.1f %s\n", T.took[i], T.names[i]);
	if (f && fclose(f) == 0)
		rename(tmp, T.file);
	else
		unlink(tmp);
}
