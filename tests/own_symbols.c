/* own_symbols.c - a program that names three functions the way libhvd's
 * internals are named (timeline_open, control_stop, engine_start), links
 * against libhvd.a and runs a one-rank world: the link succeeds and the
 * runtime keeps calling its own, because libhvd exports only hvd_*
 * (runtime/README.md, "Linking"). Prints one line; exit 0 when all held.
 * What this is not: a test of the collectives (group runtime).
 */
#include <stdio.h>

#include "hvd.h"

static int calls;

int timeline_open(void) { return ++calls; }
int control_stop(void) { return ++calls; }
int engine_start(void) { return ++calls; }

int main(void)
{
	if (hvd_init() != HVD_OK) {
		fprintf(stderr, "own_symbols: hvd_init: %s\n", hvd_error());
		return 1;
	}
	float x = 3.0f;
	int rc = hvd_allreduce("x", &x, 1, HVD_F32, HVD_SUM);
	int size = hvd_size();
	int down = hvd_shutdown();
	int own = timeline_open() + control_stop() + engine_start();
	printf("own_symbols: size %d allreduce %d (%g) shutdown %d own calls %d\n", size, rc,
	       (double)x, down, own);
	return size == 1 && rc == HVD_OK && x == 3.0f && down == HVD_OK && own == 6 ? 0 : 1;
}
