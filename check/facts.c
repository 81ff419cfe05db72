/* facts.c - the hvd plugin as the task sees it (facts.h): HVD_BIND says it
 * placed the task, HVD_PLUGIN_VERSION its version, HVD_SLURM_VERSION the
 * version of the slurmstepd that started the task (spank's S_SLURM_VERSION:
 * what runs on the node, not what srun on the login node is), and
 * HVD_GPU_BUSID the task's GPU.
 * What it does not do: look at the hardware (locality.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v && v[0] ? v : fallback;
}

void check_facts(struct check_record *r, const char *runtime_version)
{
	const char *visible = env_or("CUDA_VISIBLE_DEVICES", "");
	snprintf(r->gpu, sizeof(r->gpu), "%s", env_or("HVD_GPU_BUSID", "-"));
	snprintf(r->plugin, sizeof(r->plugin), "%s", env_or("HVD_PLUGIN_VERSION", "-"));
	snprintf(r->slurm, sizeof(r->slurm), "%s", env_or("HVD_SLURM_VERSION", "-"));
	if (!getenv("HVD_BIND")) {
		check_record_fail(r, "hvd plugin: 'HVD_BIND': unset: the plugin did not place this "
				  "task: run with srun --hvd");
		return;
	}
	if (strcmp(r->plugin, "-") == 0)
		check_record_fail(r, "hvd plugin: 'HVD_PLUGIN_VERSION': unset: hvd.so is older than "
				  "hvd-check %s", runtime_version);
	else if (strcmp(r->plugin, runtime_version) != 0)
		check_record_fail(r, "hvd plugin: '%s': libhvd is %s: install one version", r->plugin,
				  runtime_version);
	if (visible[0] && strcmp(r->gpu, "-") == 0)
		check_record_fail(r, "GPU: 'CUDA_VISIBLE_DEVICES=%s': no HVD_GPU_BUSID: the plugin "
				  "could not name this task's GPU", visible);
}
