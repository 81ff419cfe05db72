/* bootstrap_env.c - see bootstrap_env.h. Numbers go through one strict
 * parser (the whole string, decimal, in range): "1x", "", "-1" and
 * "0x10" are errors, never a silent default.
 * What it does not do: decide between PMIx and this (bootstrap_decide).
 */
#include "bootstrap/bootstrap_env.h"
#include "core/fail.h"
#include "core/settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ENV_MAX_SIZE 65536

/* Decimal digits only, min..max. */
static int parse_int(const char *name, const char *v, long min, long max, long *out,
		     char *err, size_t errlen)
{
	int digits = *v && !v[strspn(v, "0123456789")];
	errno = 0;
	long n = digits ? strtol(v, NULL, 10) : -1;
	if (!digits || errno || n < min || n > max)
		return fail_msg(-1, err, errlen, "hvd: %s: '%s': not a number in %ld-%ld", name, v,
				min, max);
	*out = n;
	return 0;
}

static int parse_rank(char *const *envp, long size, long *rank, char *err, size_t errlen)
{
	const char *hr = settings_env(envp, "HVD_RANK"), *jci = settings_env(envp, "JOB_COMPLETION_INDEX");
	const char *name = hr ? "HVD_RANK" : "JOB_COMPLETION_INDEX";
	long other;
	if (!hr && !jci)
		return fail_msg(-1, err, errlen, "hvd: HVD_RANK: unset: HVD_SIZE is set, so this "
				"is a launch without PMIx and each process needs its rank "
				"(HVD_RANK, or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX)");
	if (parse_int(name, hr ? hr : jci, 0, ENV_MAX_SIZE - 1, rank, err, errlen))
		return -1;
	if (hr && jci) {
		if (parse_int("JOB_COMPLETION_INDEX", jci, 0, ENV_MAX_SIZE - 1, &other, err, errlen))
			return -1;
		if (other != *rank)
			return fail_msg(-1, err, errlen, "hvd: HVD_RANK: '%s': differs from "
					"JOB_COMPLETION_INDEX '%s': set one of them", hr, jci);
	}
	if (*rank >= size)
		return fail_msg(-1, err, errlen, "hvd: %s: '%ld': not below HVD_SIZE (%ld): ranks "
				"are 0 to HVD_SIZE-1%s", name, *rank, size,
				hr ? "" : " (the Job's completions and HVD_SIZE differ?)");
	return 0;
}

int bootstrap_env_parse(char *const *envp, int *rank, int *size, char *err, size_t errlen)
{
	const char *hs = settings_env(envp, "HVD_SIZE");
	long n, r;
	if (!hs)
		return fail_msg(-1, err, errlen, "hvd: HVD_SIZE: unset: %s is set, so this is a "
				"launch without PMIx and needs the number of ranks",
				settings_env(envp, "HVD_RANK") ? "HVD_RANK" : "JOB_COMPLETION_INDEX");
	if (parse_int("HVD_SIZE", hs, 1, ENV_MAX_SIZE, &n, err, errlen) ||
	    parse_rank(envp, n, &r, err, errlen))
		return -1;
	if (n > 1 && !settings_env(envp, "HVD_COORDINATOR"))
		return fail_msg(-1, err, errlen, "hvd: HVD_COORDINATOR: unset: a launch without "
				"PMIx needs rank 0's host:port (on Kubernetes the headless "
				"Service's name)");
	if (n > 1 && !settings_env(envp, "HVD_SECRET_FILE"))
		return fail_msg(-1, err, errlen, "hvd: HVD_SECRET_FILE: unset: a launch without "
				"PMIx needs the job secret in a file only its owner can read (a "
				"mounted Kubernetes Secret; never on the command line)");
	*rank = (int)r;
	*size = (int)n;
	return 0;
}

void bootstrap_env_places(struct bootstrap *b, struct host_entry *hosts)
{
	int nodes = 0, same = 0;
	for (int r = 0; r < b->size; r++) {
		int node = -1, before = 0; /* the rows before r on its host share one node id */
		for (int q = 0; q < r; q++)
			if (!strcmp(hosts[q].host, hosts[r].host)) {
				before++;
				node = hosts[q].node_id;
			}
		hosts[r].local_rank = before;
		hosts[r].node_id = before ? node : nodes++;
		same += !strcmp(hosts[r].host, hosts[b->rank].host);
	}
	b->local_rank = hosts[b->rank].local_rank;
	b->node_id = hosts[b->rank].node_id;
	b->local_size = same;
	b->node_count = nodes;
}
