/* test_sbatch_scripts.c - every etc/sbatch script submitted as written to
 * the tests/slurm clusters, resized only on sbatch's command line (nodes,
 * partition, tasks, GPUs, CPUs) and by chexnet train options after the
 * script's name (32 px, 3 steps), from a folder laid out like the
 * repository root (build/chexnet) with DATA and OUT in the environment.
 * Each script sets no backend (no --backend, no HVD_BACKEND), passes
 * --precision auto and the options after its name to `srun build/chexnet
 * train`; each job ends with exit 0 and trained with chexnet's own
 * choices: the cpu backend (the clusters' GPUs are device files CUDA cannot
 * use; the GPU scripts then warn once and the runtime stays on a host
 * backend, never NCCL; where CUDA can use them: gpu, NCCL, bf16) and
 * --precision auto resolved for the CPU the job runs on (bf16 where it
 * computes bf16 natively, else fp32). Group slurm-sbatch@avx2 runs the same
 * cases under ONEDNN_MAX_CPU_ISA=AVX2 (fp32, no bf16 refusal); the
 * multi-node scripts (chexnet-multinode, chexnet-cpu at its 2 nodes) run in
 * group slurm-multinode-sbatch (and @avx2) on the multi-node cluster. The
 * preemptible script, stopped by SIGUSR1 to its batch shell, checkpoints,
 * requeues itself and its next run resumes and finishes.
 * What it does not do: run a real GPU (tests/gpu/run.sh on a GPU node) or
 * check what training computes (slurm-e2e, slurm-multinode-train).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#ifdef HAVE_CPU_BACKEND
#include "cpu_isa_caps.h"
#endif

/* chexnet train options after the script's name: small and short. */
#define TINY "--size 32 --batch 8 --threads 1 --loader-threads 1 --progress-every 1"
#define SMALL TINY " --steps 3"

/* tmpdir/build/chexnet and tmpdir/shards (generated, packed at 36 px). */
static int make_root(void)
{
	char cmd[2048];
	struct test_proc p;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p build && cp '%s/chexnet' build/chexnet && build/chexnet synth "
		 "--out nih --count 120 --size 64 --seed 3 && build/chexnet pack --data nih --out shards "
		 "--size 36", test_tmpdir(), test_build_dir());
	if (test_run(cmd, 120, &p) != 0)
		return -1;
	int rc = p.exit_code;
	CHECK_MSG(rc == 0, "synth + pack: exit %d: %.600s", rc, p.err);
	test_proc_free(&p);
	return rc == 0 ? 0 : -1;
}

/* `sbatch --wait OPTS` with the script of etc/sbatch named SCRIPT and SMALL,
 * in tmpdir; prints rc= and the job's output. */
static int submit(const char *opts, const char *script, struct test_proc *p)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd '%s' && DATA=shards OUT=ck sbatch --wait -o job.out %s "
		 "'%s/etc/sbatch/%s' " SMALL "; echo rc=$?; cat job.out", test_tmpdir(), opts,
		 test_src_dir(), script);
	return test_run(cmd, 240, p);
}

/* What --precision auto must resolve to on this CPU (under the group's
 * ISA cap, which the job inherits through sbatch's environment): bf16
 * where the CPU computes it natively. */
static const char *auto_precision(void)
{
#ifdef HAVE_CPU_BACKEND
	return cpu_bf16_native() ? "bf16" : "fp32";
#else
	return "fp32";
#endif
}

/* The job's output: finished (ENDED in it), R ranks, and chexnet's own
 * choices. Where CUDA can use the granted GPUs (a test cluster on a GPU
 * machine): the gpu backend, NCCL, bf16. Else the cpu backend (with the
 * one warning when GPUs were granted), a host backend in the runtime, and
 * the precision auto gives on this CPU. */
static void check_job(const struct test_proc *p, int ranks, int gpus, const char *ended)
{
	char want[128];
	CHECK_MSG(strstr(p->out, ended), "job: %.2000s %.600s", p->out, p->err);
	snprintf(want, sizeof(want), "hvd: start-up: %d ranks, backend ", ranks);
	CHECK_CONTAINS(p->out, want);
	CHECK_CONTAINS(p->out, "step 3/");
	CHECK_CONTAINS(p->out, "chexnet: overall: ");
	if (gpus && strstr(p->out, "chexnet: backend gpu (auto: ")) {
		snprintf(want, sizeof(want), "hvd: start-up: %d ranks, backend nccl", ranks);
		CHECK_CONTAINS(p->out, want);
		CHECK_CONTAINS(p->out, "chexnet: precision bf16 (auto: ");
		return;
	}
	CHECK_MSG(!strstr(p->out, "backend nccl"), "NCCL on a CPU backend: %.1500s", p->out);
	CHECK_CONTAINS(p->out, "chexnet: backend cpu (auto: ");
	if (gpus)
		CHECK_CONTAINS(p->out, "warning: GPUs granted (");
	else
		CHECK_MSG(!strstr(p->out, "GPUs granted"), "%.1500s", p->out);
	snprintf(want, sizeof(want), "chexnet: precision %s (auto: ", auto_precision());
	CHECK_CONTAINS(p->out, want);
	snprintf(want, sizeof(want), "(backend cpu, %s, ", auto_precision());
	CHECK_CONTAINS(p->out, want);
	const char *cap = getenv("ONEDNN_MAX_CPU_ISA");
	if (cap && strcmp(cap, "AVX2") == 0)
		CHECK_CONTAINS(p->out, "(backend cpu, fp32, avx2, ");
}

/* The script leaves the backend and the runtime's choice alone (no
 * --backend, no HVD_BACKEND), asks for --precision auto and runs
 * build/chexnet with the options after its name. */
static void check_script_text(const char *script)
{
	char *path = NULL, *text;
	if (asprintf(&path, "%s/etc/sbatch/%s", test_src_dir(), script) < 0)
		return;
	text = test_read_file(path, NULL);
	CHECK_MSG(text, "cannot read %s", path);
	if (text) {
		CHECK_MSG(!strstr(text, "--backend") && !strstr(text, "HVD_BACKEND="),
			  "%s: sets the backend", script);
		CHECK_CONTAINS(text, "srun build/chexnet train ");
		CHECK_CONTAINS(text, "--precision auto");
		CHECK_CONTAINS(text, "\"$@\"");
	}
	free(text);
	free(path);
}

static void run_script(const char *opts, const char *script, int ranks, int nodes, int gpus)
{
	struct test_proc p;
	char want[64];
	check_script_text(script);
	if (make_root() || submit(opts, script, &p))
		return;
	check_job(&p, ranks, gpus, "rc=0");
	snprintf(want, sizeof(want), ", %d node%s\n", nodes, nodes == 1 ? "" : "s");
	CHECK_CONTAINS(p.out, want);
	test_proc_free(&p);
}

/* ---- the one-node cluster: 8 CPUs in 2 sockets, 4 fake GPUs, partition debug ---- */

static void test_cpu_script_on_one_node(void)
{
	run_script("-p debug -N 1 --ntasks-per-node=2 -c 2", "chexnet-cpu.sbatch", 2, 1, 0);
}

static void test_one_node_gpu_script(void)
{
	run_script("--ntasks-per-node=2 --gres=gpu:2 -c 2", "chexnet-1node-4gpu.sbatch", 2, 1, 1);
}

/* Stopped by SIGUSR1 to its batch shell at step 2 of 2 epochs (as Slurm's
 * --signal=B:USR1 does before the time limit): chexnet checkpoints and
 * exits 75, the script requeues the job, and the requeued run resumes from
 * OUT/last and finishes: the job ends COMPLETED, exit 0, after one
 * restart. Slurm holds a requeued job for about 2 minutes (its BeginTime);
 * the test moves that BeginTime to 2 s from now once the job is pending
 * again and the node idle (the first run's processes gone): slurmd refuses
 * a credential made in the second it revoked the job's old one ("Killing
 * non-startable batch JobId=...: Job credential revoked").
 * (`sbatch --wait` can return at the requeue: the test polls instead.) */
static void test_preemptible_script_requeues_and_resumes(void)
{
	struct test_proc p;
	char cmd[4096];
	check_script_text("chexnet-preemptible.sbatch");
	if (make_root())
		return;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && j=$(DATA=shards OUT=ck sbatch --parsable -o job.out --ntasks-per-node=2 "
		 "--gres=gpu:2 -c 2 '%s/etc/sbatch/chexnet-preemptible.sbatch' " TINY " --epochs 2) "
		 "|| exit 1; "
		 "for i in $(seq 1200); do grep -q 'step 2/' job.out 2>/dev/null && break; sleep 0.1; done; "
		 "scancel --batch --signal=USR1 \"$j\"; "
		 "for i in $(seq 600); do scontrol show job \"$j\" | grep -q JobState=PENDING && "
		 "[ \"$(sinfo -h -o %%t)\" = idle ] && break; sleep 0.1; done; "
		 "scontrol update JobId=\"$j\" StartTime=now+2; "
		 "for i in $(seq 1800); do s=$(scontrol -o show job \"$j\" 2>&1); case $s in "
		 "*Invalid*) break;; *Restarts=0*) ;; *JobState=COMPLETED*|*JobState=FAILED*|"
		 "*JobState=CANCELLED*|*JobState=TIMEOUT*) break;; esac; sleep 0.1; done; "
		 "echo \"$s\" | grep -o 'Restarts=[0-9]*\\|JobState=[A-Z]*\\|ExitCode=[0-9:]*'; "
		 "cat job.out", test_tmpdir(), test_src_dir());
	if (test_run(cmd, 240, &p) != 0)
		return;
	CHECK_CONTAINS(p.out, "Restarts=1");
	CHECK_CONTAINS(p.out, "JobState=COMPLETED");
	CHECK_CONTAINS(p.out, "ExitCode=0:0");
	const char *again = strstr(p.out, "chexnet checkpointed on a signal: requeueing job ");
	CHECK_MSG(again, "no requeue: %.2000s %.600s", p.out, p.err);
	CHECK_CONTAINS(p.out, "exit 75");
	if (again) {
		CHECK_CONTAINS(again, "chexnet: resuming from ck/last");
		CHECK_CONTAINS(again, "chexnet: overall: ");
	}
	check_job(&p, 2, 1, "ExitCode=0:0");
	test_proc_free(&p);
}

const struct test_case sbatch_scripts_tests[] = {
	{ "cpu_script_on_one_node", test_cpu_script_on_one_node },
	{ "one_node_gpu_script", test_one_node_gpu_script },
	{ "preemptible_script_requeues_and_resumes", test_preemptible_script_requeues_and_resumes },
	{ 0 }
};

/* ---- the multi-node cluster: n1, n2 with 4 CPUs and 2 fake GPUs each ---- */

static void test_multinode_script_on_two_nodes(void)
{
	run_script("-N 2 --ntasks-per-node=1 --gres=gpu:1 -c 2", "chexnet-multinode.sbatch", 2, 2, 1);
}

static void test_cpu_script_on_two_nodes(void)
{
	run_script("-p debug --ntasks-per-node=1 -c 2", "chexnet-cpu.sbatch", 2, 2, 0);
}

const struct test_case sbatch_multinode_tests[] = {
	{ "multinode_script_on_two_nodes", test_multinode_script_on_two_nodes },
	{ "cpu_script_on_two_nodes", test_cpu_script_on_two_nodes },
	{ 0 }
};
