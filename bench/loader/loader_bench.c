/* loader_bench.c - images/s of the input pipeline alone: opens the loader
 * on a pack or an NIH folder (direct mode) and takes batches as fast as it
 * can for a number of batches, the trainer doing nothing. One result line.
 * Usage: bench-loader DIR THREADS BATCH SIZE BATCHES
 * What it does not do: train, or decide pass/fail (bench, not a test).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "data/load/loader.h"

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: bench-loader DIR THREADS BATCH SIZE BATCHES\n");
		return 2;
	}
	struct data_loader_config c;
	char err[2048];
	data_loader_config_init(&c);
	c.dir = argv[1];
	c.split = DATA_TRAIN;
	c.threads = atoi(argv[2]);
	c.batch = atoi(argv[3]);
	c.size = atoi(argv[4]);
	c.crop = DATA_CROP_RANDOM;
	c.flip = 1;
	c.seed = 1;
	long batches = atol(argv[5]), images = 0;
	struct data_loader *dl = data_loader_open(&c, err, sizeof(err));
	if (!dl) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	double t0 = now_seconds();
	for (long i = 0; i < batches;) {
		struct batch *b;
		int rc = data_loader_next(dl, &b);
		if (rc < 0) {
			fprintf(stderr, "%s\n", data_loader_error(dl));
			return 1;
		}
		if (rc == 0)
			continue;
		images += b->count;
		data_loader_release(dl, b);
		i++;
	}
	double dt = now_seconds() - t0;
	printf("loader %s threads %d batch %d size %d: %ld images in %.2f s: %.0f images/s\n",
	       argv[1], c.threads, c.batch, c.size, images, dt, (double)images / dt);
	data_loader_close(dl);
	return 0;
}
