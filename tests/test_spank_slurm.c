/* test_spank_slurm.c - hvd.so under real Slurm (the tests/slurm cluster:
 * 4 fake GPUs, this machine's 2 CPUs). Each case sets the plugin's site
 * arguments, mostly topology=tests/topo/two-cpu-4gpu.xml (2 packages x 1
 * PU, 2 GPUs each, matching this machine), runs srun/sbatch and checks what
 * each task saw: CUDA_VISIBLE_DEVICES, Cpus_allowed_list, HVD_*, messages
 * and exit codes. What it does not do: unit-test placement or the parsers
 * (test_spank_placement.c, test_spank_options.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

/* the Slurm version of the headers hvd.so was built with (spank/module.mk) */
#ifndef HVD_SLURM_VERSION
#define HVD_SLURM_VERSION "(no Slurm headers)"
#endif

/* One line per task: rank|visible|allowed CPUs|busid|HVD_CPUS|socket|bind|order */
static const char show_script[] =
	"#!/bin/sh\n"
	"cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)\n"
	"echo \"$SLURM_PROCID|${CUDA_VISIBLE_DEVICES-unset}|$cpus|${HVD_GPU_BUSID-unset}|"
	"${HVD_CPUS-unset}|${HVD_SOCKET-unset}|${HVD_BIND-unset}|${CUDA_DEVICE_ORDER-unset}\"\n";

static const char *untouched4 =
	"0|0,1,2,3|0-1|unset|unset|unset|unset|unset\n"
	"1|0,1,2,3|0-1|unset|unset|unset|unset|unset\n"
	"2|0,1,2,3|0-1|unset|unset|unset|unset|unset\n"
	"3|0,1,2,3|0-1|unset|unset|unset|unset|unset\n";

static const char *numa_first4 =
	"0|0,1,2,3|0|0000:3b:00.0|0|0|numa|PCI_BUS_ID\n"
	"1|1,0,2,3|0|0000:5e:00.0|0|0|numa|PCI_BUS_ID\n"
	"2|2,0,1,3|1|0000:86:00.0|1|1|numa|PCI_BUS_ID\n"
	"3|3,0,1,2|1|0000:af:00.0|1|1|numa|PCI_BUS_ID\n";

/* --hvd=socket (or --gpu-bind=socket through contrib/srun): the same here,
 * where each socket has one NUMA node */
static const char *socket_bound4 =
	"0|0,1,2,3|0|0000:3b:00.0|0|0|socket|PCI_BUS_ID\n"
	"1|1,0,2,3|0|0000:5e:00.0|0|0|socket|PCI_BUS_ID\n"
	"2|2,0,1,3|1|0000:86:00.0|1|1|socket|PCI_BUS_ID\n"
	"3|3,0,1,2|1|0000:af:00.0|1|1|socket|PCI_BUS_ID\n";

/* --hvd=only (or Slurm's own per-task binding): one GPU each, sockets as above */
static const char *only_numa4 =
	"0|0|0|0000:3b:00.0|0|0|numa|PCI_BUS_ID\n"
	"1|1|0|0000:5e:00.0|0|0|numa|PCI_BUS_ID\n"
	"2|2|1|0000:86:00.0|1|1|numa|PCI_BUS_ID\n"
	"3|3|1|0000:af:00.0|1|1|numa|PCI_BUS_ID\n";

/* Site arguments: topology of this machine plus extra. */
static int plugstack(const char *extra)
{
	char args[4200];
	snprintf(args, sizeof(args), "topology=%s/tests/topo/two-cpu-4gpu.xml %s", test_src_dir(),
		 extra);
	return test_cluster_plugstack(args);
}

/* Writes the per-task printer as ./chexnet in the case's temp dir. */
static void write_show(void)
{
	char *path = test_path(test_tmpdir(), "chexnet");
	CHECK(test_write_file(path, show_script, strlen(show_script)) == 0);
	CHECK(chmod(path, 0755) == 0);
	free(path);
}

/* Runs CMD in the case's temp dir; stdout sorted, stderr as is, the exit
 * status CMD's. */
static void job(const char *cmd, struct test_proc *p)
{
	char body[8192];
	write_show();
	char *script = test_path(test_tmpdir(), "job-cmd.sh");
	snprintf(body, sizeof(body), "cd '%s' || exit 99\n{ %s\n} > job-out.txt\nrc=$?\n"
		 "sort job-out.txt\nexit $rc\n", test_tmpdir(), cmd);
	CHECK(test_write_file(script, body, strlen(body)) == 0);
	char run[4200];
	snprintf(run, sizeof(run), "sh '%s'", script);
	free(script);
	CHECK(test_run(run, 90, p) == 0);
	CHECK_MSG(!p->timed_out, "timed out: %s", cmd);
}

/* The usual case: site arguments, one job, its exit code and (unless
 * want_out is NULL) its sorted stdout. The caller checks p->err, frees p. */
static void run_case(const char *site, const char *cmd, int want_exit, const char *want_out,
		     struct test_proc *p)
{
	CHECK_INT(plugstack(site), 0);
	job(cmd, p);
	CHECK_INT(p->exit_code, want_exit);
	if (want_out)
		CHECK_STR(p->out, want_out);
}

/* A job under the site arguments already set: exit 0 and exactly
 * want_out on (sorted) stdout. */
static void job_prints(const char *cmd, const char *want_out)
{
	struct test_proc p;
	job(cmd, &p);
	CHECK_MSG(p.exit_code == 0, "%s: exit %d: %s", cmd, p.exit_code, p.err);
	CHECK_STR(p.out, want_out);
	test_proc_free(&p);
}

/* A job under the site arguments already set that fails with want_err
 * somewhere in its stderr. */
static void job_fails_saying(const char *cmd, const char *want_err)
{
	struct test_proc p;
	job(cmd, &p);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, want_err);
	test_proc_free(&p);
}

/* Sets the site arguments, then job_prints(). */
static void site_job_prints(const char *site, const char *cmd, const char *want_out)
{
	CHECK_INT(plugstack(site), 0);
	job_prints(cmd, want_out);
}

/* No task of a refused job ran: none touched ./launched. */
static void check_nothing_launched(void)
{
	char *marker = test_path(test_tmpdir(), "launched");
	CHECK_MSG(access(marker, F_OK) != 0, "the task ran");
	free(marker);
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* ------------------------------------------------------------------ srun */

static void test_hvd_gives_each_task_its_gpu_first_and_its_socket(void)
{
	struct test_proc p;
	run_case("", "srun --hvd -n 4 --gres=gpu:4 ./chexnet", 0, numa_first4, &p);
	CHECK_STR(p.err, "");
	test_proc_free(&p);
}

static void test_hvd_only_shows_exactly_one_gpu(void)
{
	site_job_prints("", "srun --hvd=only -n 4 --gres=gpu:4 ./chexnet", only_numa4);
}

static void test_hvd_core_shares_the_single_core_and_says_so_once(void)
{
	struct test_proc p;
	run_case("", "srun --hvd=core -n 4 --gres=gpu:4 ./chexnet", 0, NULL, &p);
	CHECK_STR(p.out,
		  "0|0,1,2,3|0|0000:3b:00.0|0|0|core|PCI_BUS_ID\n"
		  "1|1,0,2,3|0|0000:5e:00.0|0|0|core|PCI_BUS_ID\n"
		  "2|2,0,1,3|1|0000:86:00.0|1|1|core|PCI_BUS_ID\n"
		  "3|3,0,1,2|1|0000:af:00.0|1|1|core|PCI_BUS_ID\n");
	CHECK_INT(count_of(p.err, "hvd: note: fewer allowed cores than tasks near their GPUs: tasks share "
			   "cores\n"), 1);
	test_proc_free(&p);
}

static void test_hvd_none_sets_gpus_and_leaves_cpus(void)
{
	struct test_proc p;
	run_case("", "srun --hvd=none -n 4 --gres=gpu:4 ./chexnet", 0, NULL, &p);
	CHECK_STR(p.out,
		  "0|0,1,2,3|0-1|0000:3b:00.0|0-1|0|none|PCI_BUS_ID\n"
		  "1|1,0,2,3|0-1|0000:5e:00.0|0-1|0|none|PCI_BUS_ID\n"
		  "2|2,0,1,3|0-1|0000:86:00.0|0-1|1|none|PCI_BUS_ID\n"
		  "3|3,0,1,2|0-1|0000:af:00.0|0-1|1|none|PCI_BUS_ID\n");
	test_proc_free(&p);
}

static void test_hvd_verbose_prints_one_line_per_task(void)
{
	struct test_proc p;
	char want[512];
	const char *bus[] = { "0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0" };
	run_case("", "srun --hvd=verbose -n 4 --gres=gpu:4 ./chexnet", 0, numa_first4, &p);
	for (int r = 0; r < 4; r++) {
		snprintf(want, sizeof(want),
			 "hvd: rank %d (local %d/4) on %s: GPU %d (%s), NUMA %d, socket %d, CPUs %d (1 of 1 "
			 "local to the GPU), bind numa, gpu first, hvd " HVD_VERSION ", Slurm " HVD_SLURM_VERSION
			 "\n", r, r, test_hostname(), r, bus[r], r / 2, r / 2, r / 2);
		CHECK_INT(count_of(p.err, want), 1);
	}
	CHECK_INT(count_of(p.err, "\n"), 4);
	test_proc_free(&p);
}

static void test_memory_prefers_the_socket_numa_node(void)
{
	struct test_proc p;
	CHECK_INT(plugstack(""), 0);
	job("srun --hvd -n 1 --gres=gpu:1 sh -c 'head -1 /proc/self/numa_maps'; "
	    "srun -n 1 --gres=gpu:1 sh -c 'head -1 /proc/self/numa_maps'", &p);
	CHECK_INT(p.exit_code, 0);
	CHECK_INT(count_of(p.out, " prefer:0 "), 1);   /* node 1 does not exist here: node 0 */
	CHECK_INT(count_of(p.out, " default "), 1);
	test_proc_free(&p);
}

static void test_five_tasks_on_four_gpus_fail_with_the_message(void)
{
	struct test_proc p;
	char want[512];
	CHECK_INT(plugstack(""), 0);
	job("srun --hvd -n 5 --gres=gpu:4 ./chexnet", &p);
	CHECK(p.exit_code != 0);
	CHECK_STR(p.out, "");
	snprintf(want, sizeof(want), "hvd: oversubscribed: '5 tasks, 4 GPUs on %s': use "
		 "--ntasks-per-node=4 (sites can allow it with oversubscribe=warn)\n", test_hostname());
	CHECK_INT(count_of(p.err, want), 1);
	test_proc_free(&p);
}

static void test_oversubscribe_warn_shares_gpus(void)
{
	struct test_proc p;
	run_case("oversubscribe=warn", "srun --hvd -n 5 --gres=gpu:4 ./chexnet", 0, NULL, &p);
	CHECK_CONTAINS(p.out, "4|0,1,2,3|0|0000:3b:00.0|0|0|numa|PCI_BUS_ID\n");
	CHECK_CONTAINS(p.out, "3|3,0,1,2|1|");
	CHECK_INT(count_of(p.err, "tasks share GPUs (oversubscribe=warn)"), 1);
	test_proc_free(&p);
}

static void test_typo_is_refused_before_launch_naming_the_token(void)
{
	struct test_proc p;
	run_case("", "srun --hvd=sokcet -n 1 --gres=gpu:1 touch launched", 255, NULL, &p);
	CHECK_CONTAINS(p.err, "hvd: --hvd: 'sokcet': unknown sub-option");
	CHECK(strstr(p.err, "job") == NULL && strstr(p.err, "allocat") == NULL);
	test_proc_free(&p);
	check_nothing_launched();
	job("sbatch --hvd=socket,core -n 1 --wrap 'touch launched'", &p);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "hvd: --hvd: 'core': conflicts with 'socket' given before");
	CHECK(strstr(p.out, "Submitted") == NULL);
	test_proc_free(&p);
}

static void test_help_prints_the_grammar_and_stops(void)
{
	struct test_proc p;
	CHECK_INT(plugstack(""), 0);
	job("srun --hvd=help -n 1 touch launched", &p);
	CHECK(p.exit_code != 0);
	CHECK_CONTAINS(p.err, "hvd: --hvd[=LIST]");
	CHECK_CONTAINS(p.err, "    only    ");
	CHECK_CONTAINS(p.err, "    off     ");
	CHECK_CONTAINS(p.err, "  hvd " HVD_VERSION ", built for Slurm " HVD_SLURM_VERSION "\n");
	test_proc_free(&p);
	check_nothing_launched();
	job("srun --help", &p);   /* and srun's own help lists the option */
	CHECK_CONTAINS(p.out, "--hvd");
	test_proc_free(&p);
}

static void test_slurm_per_task_binding_is_kept(void)
{
	site_job_prints("", "srun --hvd -n 4 --gpus-per-task=1 ./chexnet", only_numa4);
	job_prints("srun --hvd --gpu-bind=closest -n 4 --gres=gpu:4 ./chexnet", numa_first4);
}

static void test_cpu_only_step_goes_socket_by_socket(void)
{
	/* a bus id left in the environment is not the task's GPU: dropped */
	site_job_prints("", "HVD_GPU_BUSID=0000:3b:00.0 srun --hvd -n 2 ./chexnet",
			"0|unset|0|unset|0|0|numa|unset\n"
			"1|unset|1|unset|1|1|numa|unset\n");
}

static void test_discovered_topology_without_the_fake_gpus(void)
{
	struct test_proc p;
	CHECK_INT(test_cluster_plugstack(""), 0);   /* hwloc discovery: no NVIDIA GPU here */
	job("srun --hvd -n 2 --gres=gpu:2 ./chexnet", &p);
	CHECK_INT(p.exit_code, 0);
	CHECK_STR(p.out,
		  "0|0,1|0|unset|0|-1|numa|PCI_BUS_ID\n"
		  "1|1,0|1|unset|1|-1|numa|PCI_BUS_ID\n");
	CHECK_INT(count_of(p.err, "granted GPU #0 is not in the topology: CPUs split among the tasks"), 1);
	test_proc_free(&p);
}

/* ------------------------------------------------------------ site args */

static void test_default_off_leaves_jobs_untouched(void)
{
	struct test_proc p;
	run_case("default=off", "srun -n 4 --gres=gpu:4 ./chexnet", 0, untouched4, &p);
	CHECK_STR(p.err, "");
	test_proc_free(&p);
}

static void test_default_on_applies_without_hvd_and_off_opts_out(void)
{
	site_job_prints("default=on", "srun -n 4 --gres=gpu:4 ./chexnet", numa_first4);
	job_prints("srun --hvd=off -n 4 --gres=gpu:4 ./chexnet", untouched4);
	job_prints("srun -n 2 ./chexnet",   /* no GPUs, no --hvd: untouched */
		   "0|unset|0-1|unset|unset|unset|unset|unset\n"
		   "1|unset|0-1|unset|unset|unset|unset|unset\n");
}

static void test_site_defaults_apply_and_users_override_them(void)
{
	struct test_proc p;
	run_case("gpu=only bind=none verbose=1", "srun --hvd -n 4 --gres=gpu:4 ./chexnet", 0, NULL, &p);
	CHECK_STR(p.out,
		  "0|0|0-1|0000:3b:00.0|0-1|0|none|PCI_BUS_ID\n"
		  "1|1|0-1|0000:5e:00.0|0-1|0|none|PCI_BUS_ID\n"
		  "2|2|0-1|0000:86:00.0|0-1|1|none|PCI_BUS_ID\n"
		  "3|3|0-1|0000:af:00.0|0-1|1|none|PCI_BUS_ID\n");
	CHECK_INT(count_of(p.err, "bind none, gpu only, hvd " HVD_VERSION ", Slurm " HVD_SLURM_VERSION "\n"), 4);
	test_proc_free(&p);
	job_prints("srun --hvd=first,socket -n 4 --gres=gpu:4 ./chexnet", socket_bound4);
}

static void test_bad_site_arguments_stop_the_plugin_loading(void)
{
	CHECK_INT(plugstack("bogus=1"), 0);
	job_fails_saying("srun -n 1 true", "hvd: plugstack.conf: 'bogus=1': unknown key");
	CHECK_INT(test_cluster_plugstack("topology=relative.xml"), 0);
	job_fails_saying("srun -n 1 true",
			 "hvd: plugstack.conf: 'topology=relative.xml': bad value for topology");
	/* an absolute path that is missing fails the tasks that use it */
	CHECK_INT(test_cluster_plugstack("topology=/nonexistent/topo.xml"), 0);
	job_fails_saying("srun --hvd -n 1 --gres=gpu:1 ./chexnet",
			 "hvd: topology: '/nonexistent/topo.xml': ");
	CHECK_INT(plugstack(""), 0);
}

/* ---------------------------------------------------------------- sbatch */

static void test_sbatch_hvd_leaves_the_batch_shell_and_binds_the_steps(void)
{
	char want[1024];
	CHECK_INT(plugstack(""), 0);
	const char *script =
		"#!/bin/sh\n"
		"#SBATCH -n 4\n"
		"#SBATCH --gres=gpu:4\n"
		"#SBATCH --hvd\n"
		"echo \"batch|$CUDA_VISIBLE_DEVICES|$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)|"
		"${HVD_CPUS-unset}\"\n"
		"srun ./chexnet\n";
	char *path = test_path(test_tmpdir(), "job.sh");
	CHECK(test_write_file(path, script, strlen(script)) == 0);
	free(path);
	/* sorted: the four step lines, then the batch shell's own */
	snprintf(want, sizeof(want), "%sbatch|0,1,2,3|0-1|unset\n", numa_first4);
	job_prints("sbatch --wait -o out.txt job.sh >/dev/null && cat out.txt", want);
}

static void test_salloc_hvd_binds_the_steps(void)
{
	site_job_prints("", "salloc -n 4 --gres=gpu:4 --hvd=only srun ./chexnet", only_numa4);
}

/* ------------------------------------------------------ the srun wrapper */

static void test_stock_srun_rejects_gpu_bind_socket(void)
{
	struct test_proc p;
	run_case("", "srun --gpu-bind=socket --hvd ./chexnet", 255, NULL, &p);
	CHECK_CONTAINS(p.err, "srun: error: Invalid --gpu-bind argument: gpu:socket");
	CHECK_STR(p.out, "");
	test_proc_free(&p);
}

static void test_wrapper_makes_the_promised_line_work(void)
{
	char cmd[8192];
	CHECK_INT(plugstack(""), 0);
	/* the literal line, inside a 4-task 4-GPU allocation */
	snprintf(cmd, sizeof(cmd),
		 "PATH='%s/contrib':$PATH sbatch --wait -n 4 --gres=gpu:4 -o out.txt "
		 "--wrap 'srun --gpu-bind=socket --hvd ./chexnet' >/dev/null && cat out.txt",
		 test_src_dir());
	job_prints(cmd, socket_bound4);
	/* and as typed at a login shell: one task, no GPUs, bound to socket 0 */
	snprintf(cmd, sizeof(cmd), "PATH='%s/contrib':$PATH srun --gpu-bind=socket --hvd ./chexnet",
		 test_src_dir());
	job_prints(cmd, "0|unset|0|unset|0|0|socket|unset\n");
}

const struct test_case spank_slurm_tests[] = {
	{ "hvd_gives_each_task_its_gpu_first_and_its_socket",
	  test_hvd_gives_each_task_its_gpu_first_and_its_socket },
	{ "hvd_only_shows_exactly_one_gpu", test_hvd_only_shows_exactly_one_gpu },
	{ "hvd_core_shares_the_single_core_and_says_so_once",
	  test_hvd_core_shares_the_single_core_and_says_so_once },
	{ "hvd_none_sets_gpus_and_leaves_cpus", test_hvd_none_sets_gpus_and_leaves_cpus },
	{ "hvd_verbose_prints_one_line_per_task", test_hvd_verbose_prints_one_line_per_task },
	{ "memory_prefers_the_socket_numa_node", test_memory_prefers_the_socket_numa_node },
	{ "five_tasks_on_four_gpus_fail_with_the_message",
	  test_five_tasks_on_four_gpus_fail_with_the_message },
	{ "oversubscribe_warn_shares_gpus", test_oversubscribe_warn_shares_gpus },
	{ "typo_is_refused_before_launch_naming_the_token",
	  test_typo_is_refused_before_launch_naming_the_token },
	{ "help_prints_the_grammar_and_stops", test_help_prints_the_grammar_and_stops },
	{ "slurm_per_task_binding_is_kept", test_slurm_per_task_binding_is_kept },
	{ "cpu_only_step_goes_socket_by_socket", test_cpu_only_step_goes_socket_by_socket },
	{ "discovered_topology_without_the_fake_gpus", test_discovered_topology_without_the_fake_gpus },
	{ "default_off_leaves_jobs_untouched", test_default_off_leaves_jobs_untouched },
	{ "default_on_applies_without_hvd_and_off_opts_out",
	  test_default_on_applies_without_hvd_and_off_opts_out },
	{ "site_defaults_apply_and_users_override_them", test_site_defaults_apply_and_users_override_them },
	{ "bad_site_arguments_stop_the_plugin_loading", test_bad_site_arguments_stop_the_plugin_loading },
	{ "sbatch_hvd_leaves_the_batch_shell_and_binds_the_steps",
	  test_sbatch_hvd_leaves_the_batch_shell_and_binds_the_steps },
	{ "salloc_hvd_binds_the_steps", test_salloc_hvd_binds_the_steps },
	{ "stock_srun_rejects_gpu_bind_socket", test_stock_srun_rejects_gpu_bind_socket },
	{ "wrapper_makes_the_promised_line_work", test_wrapper_makes_the_promised_line_work },
	{ 0 }
};
