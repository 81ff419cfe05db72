/* control_fixture.h - a control plane without sockets or threads, for the
 * frame parser's unit tests (test_runtime_control.c) and its fuzz target
 * (fuzz/fuzz_control.c): rank `rank` of `size` on hosts n0, n1, ...,
 * every peer closed (fd -1), rank 0 with a coordinator fusing up to
 * fusion_bytes.
 * Header-only: the fuzz target is built apart from the test runner.
 * What it does not do: connect, start the control thread or the engine.
 */
#ifndef HVD_TESTS_CONTROL_FIXTURE_H
#define HVD_TESTS_CONTROL_FIXTURE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "control/control_state.h"

static inline struct control *fixture_control(int rank, int size, uint64_t fusion_bytes)
{
	struct runtime *rt = calloc(1, sizeof(*rt));
	struct control *c = calloc(1, sizeof(*c));
	settings_defaults(&rt->set);
	rt->boot.rank = rank;
	rt->boot.size = size;
	snprintf(rt->boot.hostname, sizeof(rt->boot.hostname), "n%d", rank);
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->cond, NULL);
	pthread_cond_init(&rt->work, NULL);
	rt->hosts = calloc((size_t)size, sizeof(*rt->hosts));
	for (int r = 0; r < size; r++)
		snprintf(rt->hosts[r].host, sizeof(rt->hosts[r].host), "n%d", r);
	c->rt = rt;
	rt->ctl_wake[0] = rt->ctl_wake[1] = -1;
	c->npeers = rank == 0 ? size : 1;
	c->peers = calloc((size_t)c->npeers, sizeof(*c->peers));
	for (int i = 0; i < c->npeers; i++)
		c->peers[i].fd = -1;
	if (rank == 0)
		coord_init(&c->coord, size, fusion_bytes);
	rt->ctl = c;
	return c;
}

static inline void fixture_control_free(struct control *c)
{
	struct runtime *rt = c->rt;
	for (int i = 0; i < c->npeers; i++)
		free(c->peers[i].buf);
	free(c->peers);
	if (rt->boot.rank == 0)
		coord_free(&c->coord);
	while (rt->execs) {
		struct exec_cmd *x = rt->execs;
		rt->execs = x->next;
		free(x);
	}
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->cond);
	pthread_cond_destroy(&rt->work);
	free(rt->hosts);
	free(rt);
	free(c);
}

#endif
