/* loop/run_name.c - runs/YYYYMMDD-HHMMSS made on rank 0, its name
 * broadcast (run_name.h). What it does not do: write in it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "loop/run_name.h"
#include "train/dist.h"

/* Rank 0: the new folder's name in out, or out[0] = 0 (printed). */
static void make(char *out)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	out[0] = '\0';
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
	if (mkdir("runs", 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "chexnet: train: no --out: cannot make 'runs': %s\n", strerror(errno));
		return;
	}
	for (int n = 1; n < 1000; n++) {
		char name[RUN_NAME_MAX];
		if (n == 1)
			snprintf(name, sizeof(name), "runs/%s", stamp);
		else
			snprintf(name, sizeof(name), "runs/%s-%d", stamp, n);
		if (mkdir(name, 0755) == 0) {
			snprintf(out, RUN_NAME_MAX, "%s", name);
			return;
		}
		if (errno != EEXIST)
			break;
	}
	fprintf(stderr, "chexnet: train: no --out: cannot make 'runs/%s': %s\n", stamp,
		strerror(errno));
}

int run_name_new(char *out)
{
	float wire[RUN_NAME_MAX] = { 0 };

	if (dist_rank() == 0)
		make(out);
	if (dist_size() > 1) {
		for (int i = 0; dist_rank() == 0 && i < RUN_NAME_MAX; i++)
			wire[i] = (unsigned char)out[i];
		if (dist_broadcast("run.name", wire, RUN_NAME_MAX, 0)) {
			fprintf(stderr, "%s\n", dist_error());
			return -1;
		}
		for (int i = 0; i < RUN_NAME_MAX; i++)
			out[i] = (char)wire[i];
		out[RUN_NAME_MAX - 1] = '\0';
	}
	return out[0] ? 0 : -1;
}
