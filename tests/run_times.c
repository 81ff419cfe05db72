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
	int count, done, drawn, tty;
	double t0, group_t0;
	double last[MAX_GROUPS];     /* the previous run's seconds, or -1 */
	double took[MAX_GROUPS];     /* this run's */
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
	T.tty = isatty(1);
	T.t0 = T.group_t0 = now();
	snprintf(T.file, sizeof(T.file), "%s/check-times", build);
	read_last();
}

/* Seconds the groups from the current one on should still take. */
static double left_s(void)
{
	double mean = 0, left = 0;

	for (int i = 0; i < T.done; i++)
		mean += T.took[i] / T.done;
	for (int i = T.done; i < T.count; i++) {
		double g = T.last[i] >= 0 ? T.last[i] : mean;
		if (i == T.done)
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

	if (!T.tty || T.done >= T.count)
		return;
	where(T.done + 1, line, sizeof(line));
	printf("\r\033[K[%s: %s]", line, T.names[T.done]);
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

void run_times_group_done(const char *name, double seconds, char *buf, int len)
{
	for (int i = T.done; i < T.count; i++)
		if (!strcmp(T.names[i], name)) {
			T.took[i] = seconds;
			for (int k = T.done; k < i; k++)   /* skipped over: took nothing */
				T.took[k] = 0;
			T.done = i + 1;
			break;
		}
	T.group_t0 = now();
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
	int order[MAX_GROUPS];

	run_times_erase();
	for (int i = 0; i < T.done; i++)
		order[i] = i;
	qsort(order, (size_t)T.done, sizeof(order[0]), slower);
	printf("-- the %d slowest groups:\n", T.done < SLOWEST ? T.done : SLOWEST);
	for (int i = 0; i < T.done && i < SLOWEST; i++)
		printf("--   %7.1f s  %s\n", T.took[order[i]], T.names[order[i]]);
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
