/* plugin.c - the hvd SPANK plugin's entry points; each only dispatches on
 * spank_context():
 *   init (every context)  parse the plugstack.conf arguments (a bad one
 *                         makes the plugin fail to load), register --hvd
 *   --hvd callback        srun/sbatch/salloc: parse strictly, so a typo or
 *                         `help` stops the command before launch;
 *                         slurmstepd: the same value, forwarded by Slurm
 *   user_init             slurmstepd: remember the step's GPUs
 *   task_init             the task, as the user: task.c places it
 * What it does not do: parse (options.c), decide (placement.c), apply
 * (task.c). It never calls exit(); errors are returned to Slurm.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <slurm/spank.h>

#include "options.h"
#include "task.h"

/* The build names the Slurm version of the headers it found (mk/detect.sh);
 * Slurm loads the plugin only into that version (SPANK_PLUGIN below). */
#if HVD_SLURM_VERSION_NUMBER != SLURM_VERSION_NUMBER
#error "slurm/slurm_version.h differs from the one mk/detect.sh found: make again"
#endif

#pragma GCC visibility push(default)
SPANK_PLUGIN(hvd, 1);
#pragma GCC visibility pop

#define EXPORT __attribute__((visibility("default")))

static struct hvd_site site;
static struct hvd_request request;
static struct task_step_gpus step_gpus;

static int on_hvd_option(int val, const char *optarg, int remote)
{
	char err[512];
	(void)val;
	/* A bare `#SBATCH --hvd` reaches the steps' srun as the text "(null)"
	 * (SLURM_SPANK__SLURM_SPANK_OPTION_hvd_hvd=(null), measured on 22.05). */
	if (optarg && strcmp(optarg, "(null)") == 0)
		optarg = NULL;
	if (options_parse_request(optarg, &request, err, sizeof(err)) != 0) {
		slurm_error("%s", err);
		return -1;
	}
	if (request.help) {
		if (!remote)
			fprintf(stderr, "%s  hvd " HVD_VERSION ", built for Slurm " HVD_SLURM_VERSION "\n",
				options_help_text());
		return -1;   /* srun/sbatch stop with a non-zero status */
	}
	return 0;
}

static struct spank_option hvd_option = {
	.name = "hvd",
	.arginfo = "[list]",
	.usage = "One GPU per task, CPUs of the socket nearest it. LIST: first|only, "
		 "socket|core|none, verbose, off, help (--hvd=help explains).",
	.has_arg = 2,
	.val = 0,
	.cb = on_hvd_option,
};

static int uses_options(spank_context_t ctx)
{
	return ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE;
}

EXPORT int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[1200];
	if (options_parse_site(ac, av, &site, err, sizeof(err)) != 0) {
		slurm_error("%s", err);
		return -1;
	}
	if (!uses_options(spank_context()))
		return 0;
	if (spank_option_register(sp, &hvd_option) != ESPANK_SUCCESS) {
		slurm_error("hvd: spank_option_register: '--hvd': refused by Slurm");
		return -1;
	}
	return 0;
}

EXPORT int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE && !task_step_is_special(sp))
		task_capture_step(sp, &step_gpus);
	return 0;
}

EXPORT int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE || task_step_is_special(sp))
		return 0;
	return task_apply(sp, &site, &request, &step_gpus);
}
