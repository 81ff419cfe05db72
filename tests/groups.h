/* groups.h - every test group, in the order the runner runs them.
 *
 * Unit groups (no Slurm) come first, the multi-node cluster's lane
 * starting among them, then the groups that need the one-node
 * tests/slurm cluster. Each test file adds its table here: one extern
 * line and one row. Hidden groups run only when named with -g.
 */
#ifndef HVD_TESTS_GROUPS_H
#define HVD_TESTS_GROUPS_H

#include "runner.h"

extern const struct test_case runner_tests[];
extern const struct test_case selftest_tests[];
extern const struct test_case selftest_hang_tests[];
extern const struct test_case selftest_next_tests[];
extern const struct test_case selftest_beside_tests[];
extern const struct test_case selftest_beside_too_tests[];
extern const struct test_case selftest_cluster_hang_tests[];
extern const struct test_case selftest_cluster_beside_tests[];
extern const struct test_case selftest_cluster_leftjob_tests[];
extern const struct test_case selftest_stress_tests[];
extern const struct test_case build_tests[];
extern const struct test_case layout_tests[];
extern const struct test_case docs_tests[];
extern const struct test_case install_tests[];
extern const struct test_case slurm_install_tests[];
extern const struct test_case packages_tests[];
extern const struct test_case slurm_packages_tests[];
extern const struct test_case harness_tests[];
extern const struct test_case spank_options_tests[];
extern const struct test_case spank_placement_tests[];
extern const struct test_case spank_topo_real_tests[];
extern const struct test_case spank_slurm_tests[];
#ifdef HVD_HAVE_HWLOC
extern const struct test_case hwloc_gl_tests[];
extern const struct test_case hwloc_gl_slurm_tests[];
#endif
extern const struct test_case ref_layers_tests[];
extern const struct test_case data_formats_tests[];
extern const struct test_case data_loader_tests[];
extern const struct test_case data_pack_tests[];
extern const struct test_case dicom_tests[];
extern const struct test_case dicom_budget_tests[];
extern const struct test_case model_tests[];
extern const struct test_case backend_loss_tests[];
extern const struct test_case span_tests[];
extern const struct test_case training_tests[];
extern const struct test_case checkpoint_tests[];
extern const struct test_case run_record_tests[];
extern const struct test_case out_hostile_tests[];
extern const struct test_case metrics_tests[];
extern const struct test_case diverge_tests[];
extern const struct test_case survivors_tests[];
extern const struct test_case stop_anywhere_tests[];
extern const struct test_case checkpoint_nfs_tests[];
extern const struct test_case cpu_learning_tests[];
extern const struct test_case malformed_tests[];
extern const struct test_case malformed_data_tests[];
extern const struct test_case fuzz_files_tests[];
extern const struct test_case stop_wait_tests[];
extern const struct test_case cli_tests[];
extern const struct test_case settings_tests[];
#ifdef HVD_HAVE_RECIPE
extern const struct test_case recipe_tests[];
#endif
extern const struct test_case eval_stats_tests[];
extern const struct test_case eval_cli_tests[];
extern const struct test_case cam_tests[];
extern const struct test_case train_dist_tests[];
extern const struct test_case multinode_harness_tests[];
extern const struct test_case cgroup_slurm_tests[];
extern const struct test_case affinity_slurm_tests[];
#ifdef HVD_HAVE_CHECK
extern const struct test_case check_env_tests[];
extern const struct test_case check_slurm_tests[];
extern const struct test_case check_multinode_tests[];
#endif
#ifdef HVD_HAVE_RUNTIME
extern const struct test_case runtime_control_tests[];
extern const struct test_case runtime_attack_tests[];
extern const struct test_case fuzz_tests[];
extern const struct test_case runtime_unit_tests[];
extern const struct test_case symbols_tests[];
extern const struct test_case runtime_slurm_tests[];
extern const struct test_case env_launch_tests[];
extern const struct test_case env_launch_slurm_tests[];
extern const struct test_case env_contrib_tests[];
extern const struct test_case hvdrun_local_tests[];
extern const struct test_case e2e_slurm_tests[];
extern const struct test_case sbatch_scripts_tests[];
extern const struct test_case sbatch_multinode_tests[];
extern const struct test_case e2e_learning_tests[];
extern const struct test_case e2e_gpu_tests[];
extern const struct test_case multinode_runtime_tests[];
extern const struct test_case multinode_failure_tests[];
extern const struct test_case multinode_train_tests[];
extern const struct test_case multinode_elastic_tests[];
extern const struct test_case multinode_node_loss_tests[];
#endif
#ifdef HAVE_CPU_BACKEND
extern const struct test_case cpu_layers_tests[];
extern const struct test_case cpu_onednn3_tests[];
extern const struct test_case cpu_models_tests[];
extern const struct test_case cpu_torchvision_tests[];
extern const struct test_case cpu_isa_tests[];
const char *cpu_isa_cap_redundant(const char *env);
#define CAP_AVX2 "ONEDNN_MAX_CPU_ISA=AVX2"
#define CAP_SSE41 "ONEDNN_MAX_CPU_ISA=SSE41"
#endif
extern const struct test_case arena_tests[];
extern const struct test_case gpu_unit_tests[];
extern const struct test_case gpu_audit_tests[];
extern const struct test_case gpu_train_tests[];
extern const struct test_case gpu_tools_tests[];
#ifdef HAVE_GPU_BACKEND
extern const struct test_case gpu_ops_tests[];
extern const struct test_case gpu_emu_tests[];
extern const struct test_case gpu_emulated_tests[];
extern const struct test_case gpu_layers_tests[];
extern const struct test_case gpu_graph_tests[];
#endif

/* Rows name the fields they use; the ISA-capped variants add env,
 * matching and redundant (runner.h). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct test_group test_groups[] = {
	/* unit: no Slurm. The runner's own cases mostly wait out their
	 * selftests' sleeps and deadlines: first in the lane beside the unit
	 * groups in line (runner.h: .beside), gpu-emulated after them. The
	 * lane runs on beside the cluster groups, which leave about a
	 * quarter of the CPU idle: its other groups (one process at a time,
	 * nothing timed) are chosen so that it ends about when the one-node
	 * cluster's groups do in make check; BESIDE_IN_QUICK ones join it in
	 * make check-quick (no .slow groups there). */
	{ "runner", runner_tests, TEST_NEEDS_NOTHING, 60, 0, .beside = 1 },
	{ "build", build_tests, TEST_NEEDS_NOTHING, 300, 0, .beside = 1 },
	{ "layout", layout_tests, TEST_NEEDS_NOTHING, 30, 0 },
	{ "docs", docs_tests, TEST_NEEDS_NOTHING, 60, 0 },
#ifdef HAVE_GPU_BACKEND
	/* the longest unit group, in the lane beside the unit groups in line
	 * (runner.h: .beside); the lane's others follow it */
	{ "gpu-emulated", gpu_emulated_tests, TEST_NEEDS_NOTHING, 1500, 0, .slow = 1,
	  .beside = 1 },
#endif
	{ "install", install_tests, TEST_NEEDS_NOTHING, 240, 0 },
	{ "packages", packages_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1 },
	{ "trainer-ref", ref_layers_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "trainer-model", model_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "trainer-loss", backend_loss_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "trainer-span", span_tests, TEST_NEEDS_NOTHING, 30, 0 },
	{ "trainer-train", training_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "trainer-checkpoint", checkpoint_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "trainer-record", run_record_tests, TEST_NEEDS_NOTHING, 120, 0, .beside = 1 },
	{ "trainer-settings", settings_tests, TEST_NEEDS_NOTHING, 60, 0 },
#ifdef HVD_HAVE_RECIPE
	{ "trainer-recipe", recipe_tests, TEST_NEEDS_NOTHING, 120, 0, .beside = 1 },
#endif
	{ "trainer-hostile-out", out_hostile_tests, TEST_NEEDS_NOTHING, 180, 0, .beside = 1 },
	{ "trainer-metrics", metrics_tests, TEST_NEEDS_NOTHING, 600, 0, .beside = 1 },
	{ "trainer-eval-stats", eval_stats_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "trainer-eval", eval_cli_tests, TEST_NEEDS_NOTHING, 300, 0, .beside = 1 },
	{ "trainer-cam", cam_tests, TEST_NEEDS_NOTHING, 300, 0 },
	{ "trainer-diverge", diverge_tests, TEST_NEEDS_NOTHING, 120, 0, .beside = BESIDE_IN_QUICK },
	{ "trainer-survivors", survivors_tests, TEST_NEEDS_NOTHING, 60, 0 },
	/* real Slurm: multi-node cluster (one network namespace per node), in
	 * a lane beside every group after it (runner.h: .beside): its groups
	 * and then their stress re-runs (about 11 minutes of a whole run, half
	 * of it waiting on timeouts and Slurm) end before the groups in line
	 * do. Started here, after the first three minutes' compiles (the
	 * build group, the emulated build, the packages): 6 MPI ranks that
	 * busy-poll beside them made an exact allreduce outlast its 120 s */
	{ "slurm-multinode-harness", multinode_harness_tests, TEST_NEEDS_MULTINODE, 120, 0,
	  .beside = 1 },
#ifdef HVD_HAVE_RUNTIME
	/* under stress: what times something (the fence, the votes, the
	 * naming of failures), not layouts, sums or Slurm's own behaviour */
	{ "slurm-multinode-runtime", multinode_runtime_tests, TEST_NEEDS_MULTINODE, 150, 0,
	  .stress = 1, .stress_matching = "barrier|agreed", .beside = 1 },
	{ "slurm-multinode-failures", multinode_failure_tests, TEST_NEEDS_MULTINODE, 180, 0,
	  .stress = 1, .stress_matching = "node|cut", .beside = 1 },
	{ "slurm-multinode-train", multinode_train_tests, TEST_NEEDS_MULTINODE, 240, 0,
	  .stress = 1, .stress_matching = "cut", .beside = 1 },
	{ "slurm-multinode-elastic", multinode_elastic_tests, TEST_NEEDS_MULTINODE, 480, 0,
	  .beside = 1 },
	/* hidden: what Slurm itself does to a job that lost a node (70 s; docs/lost-rank.md) */
	{ "slurm-multinode-node-loss", multinode_node_loss_tests, TEST_NEEDS_MULTINODE, 200, 1 },
	{ "slurm-multinode-sbatch", sbatch_multinode_tests, TEST_NEEDS_MULTINODE, 240, 0,
	  .stress = 1, .beside = 1 },
#ifdef HAVE_CPU_BACKEND
	{ "slurm-multinode-sbatch@avx2", sbatch_multinode_tests, TEST_NEEDS_MULTINODE, 240, 0,
	  CAP_AVX2, NULL, cpu_isa_cap_redundant, .beside = 1 },
#endif
#endif
#ifdef HVD_HAVE_CHECK
	{ "slurm-multinode-check", check_multinode_tests, TEST_NEEDS_MULTINODE, 120, 0,
	  .beside = 1 },
#endif
	{ "trainer-stop", stop_anywhere_tests, TEST_NEEDS_NOTHING, 300, 0 },
	{ "trainer-stop-wait", stop_wait_tests, TEST_NEEDS_NOTHING, 300, 0 },
	{ "trainer-checkpoint-nfs", checkpoint_nfs_tests, TEST_NEEDS_NOTHING, 900, 0, .slow = 1,
	  .beside = 1 },
	{ "trainer-malformed", malformed_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "data-malformed", malformed_data_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "trainer-fuzz", fuzz_files_tests, TEST_NEEDS_NOTHING, 700, 0, .slow = 1, .beside = 1 },
	{ "trainer-cli", cli_tests, TEST_NEEDS_NOTHING, 120, 0, .beside = 1 },
	{ "trainer-dist", train_dist_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "arena", arena_tests, TEST_NEEDS_NOTHING, 30, 0 },
#ifdef HAVE_CPU_BACKEND
	{ "cpu-layers", cpu_layers_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "cpu-models", cpu_models_tests, TEST_NEEDS_NOTHING, 600, 0, .slow = 1, .beside = 1 },
	{ "cpu-torchvision", cpu_torchvision_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1,
	  .beside = 1 },
	{ "cpu-isa", cpu_isa_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "cpu-learning", cpu_learning_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1, .beside = 1 },
	/* the same cases with oneDNN capped (one skip where a cap lowers
	 * nothing: on an AVX2 machine the native run is the AVX2 run) */
	{ "cpu-layers@avx2", cpu_layers_tests, TEST_NEEDS_NOTHING, 60, 0,
	  CAP_AVX2, NULL, cpu_isa_cap_redundant },
	{ "cpu-layers@sse41", cpu_layers_tests, TEST_NEEDS_NOTHING, 60, 0,
	  CAP_SSE41, NULL, cpu_isa_cap_redundant },
	{ "cpu-models@avx2", cpu_models_tests, TEST_NEEDS_NOTHING, 600, 0,
	  CAP_AVX2, NULL, cpu_isa_cap_redundant, .slow = 1 },
	/* SSE4.1 runs the 1x1 convs' backward on plain layouts: the models'
	 * gradients against ref there (the 224 px cases would take minutes);
	 * nothing timed, so in the unit lane, which ends before the groups
	 * in line */
	{ "cpu-models@sse41", cpu_models_tests, TEST_NEEDS_NOTHING, 120, 0, CAP_SSE41,
	  "small_densenet_equals_ref|memory_efficient_same_gradients|resnet50_equals_ref|"
	  "resnet50_gradients_equal_ref|moves_only_3x3", cpu_isa_cap_redundant, .beside = 1 },
	/* the tree again on oneDNN 3.2 (PyPI), its own cpu groups there */
	{ "cpu-onednn3", cpu_onednn3_tests, TEST_NEEDS_NOTHING, 600, 0, .slow = 1, .beside = 1 },
	{ "trainer-loss@avx2", backend_loss_tests, TEST_NEEDS_NOTHING, 120, 0,
	  CAP_AVX2, "cpu_", cpu_isa_cap_redundant },
	{ "trainer-record@avx2", run_record_tests, TEST_NEEDS_NOTHING, 120, 0,
	  CAP_AVX2, "changes_of_meaning", cpu_isa_cap_redundant },
#endif
	{ "gpu-unit", gpu_unit_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "gpu-audit", gpu_audit_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "gpu-train", gpu_train_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "gpu-tools", gpu_tools_tests, TEST_NEEDS_NOTHING, 120, 0 },
#ifdef HAVE_GPU_BACKEND
	{ "gpu-ops", gpu_ops_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "gpu-emu", gpu_emu_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "gpu-layers", gpu_layers_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1 },
	{ "gpu-graph", gpu_graph_tests, TEST_NEEDS_NOTHING, 300, 0 },
#endif
	{ "data-formats", data_formats_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "data-loader", data_loader_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "data-pack", data_pack_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "data-dicom", dicom_tests, TEST_NEEDS_NOTHING, 500, 0, .slow = 1, .beside = 1 },
	{ "data-dicom-budget", dicom_budget_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "spank-options", spank_options_tests, TEST_NEEDS_NOTHING, 120, 0 },
	{ "spank-placement", spank_placement_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "spank-topo-real", spank_topo_real_tests, TEST_NEEDS_NOTHING, 120, 0 },
#ifdef HVD_HAVE_HWLOC
	{ "hwloc-gl", hwloc_gl_tests, TEST_NEEDS_NOTHING, 30, 0 },
#endif
#ifdef HVD_HAVE_CHECK
	{ "check", check_env_tests, TEST_NEEDS_NOTHING, 60, 0 },
#endif
#ifdef HVD_HAVE_RUNTIME
	{ "runtime", runtime_unit_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "runtime-control", runtime_control_tests, TEST_NEEDS_NOTHING, 60, 0 },
	{ "runtime-fuzz", fuzz_tests, TEST_NEEDS_NOTHING, 700, 0, .slow = 1 },
	{ "symbols", symbols_tests, TEST_NEEDS_NOTHING, 60, 0 },
#endif
#ifdef HVD_HAVE_RUNTIME
	{ "env-launch", env_launch_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1 },
	{ "env-launch-contrib", env_contrib_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1 },
#ifdef HVD_HAVE_HVDRUN
	/* in the unit lane (.beside): its timed cases allow seconds */
	{ "hvdrun-local", hvdrun_local_tests, TEST_NEEDS_NOTHING, 300, 0, .slow = 1, .beside = 1 },
#endif
#endif
	/* real Slurm: one-node cluster */
	{ "slurm-harness", harness_tests, TEST_NEEDS_CLUSTER, 120, 0 },
	{ "slurm-spank", spank_slurm_tests, TEST_NEEDS_CLUSTER, 120, 0 },
#ifdef HVD_HAVE_HWLOC
	{ "slurm-hwloc-gl", hwloc_gl_slurm_tests, TEST_NEEDS_CLUSTER, 60, 0 },
#endif
	{ "slurm-install", slurm_install_tests, TEST_NEEDS_CLUSTER, 300, 0 },
	{ "slurm-packages", slurm_packages_tests, TEST_NEEDS_CLUSTER, 300, 0 },
#ifdef HVD_HAVE_RUNTIME
	{ "slurm-runtime", runtime_slurm_tests, TEST_NEEDS_CLUSTER, 300, 0 },
	{ "slurm-control", runtime_attack_tests, TEST_NEEDS_CLUSTER, 300, 0 },
	{ "slurm-e2e", e2e_slurm_tests, TEST_NEEDS_CLUSTER, 150, 0 },
	{ "env-launch-slurm", env_launch_slurm_tests, TEST_NEEDS_CLUSTER, 300, 0 },
#ifdef HAVE_CPU_BACKEND
	{ "slurm-e2e@avx2", e2e_slurm_tests, TEST_NEEDS_CLUSTER, 150, 0,
	  CAP_AVX2, "two_ranks_equal_one_rank_accumulating_two", cpu_isa_cap_redundant },
#endif
	{ "slurm-e2e-learning", e2e_learning_tests, TEST_NEEDS_CLUSTER, 240, 0 },
	{ "slurm-sbatch", sbatch_scripts_tests, TEST_NEEDS_CLUSTER, 240, 0 },
#ifdef HAVE_CPU_BACKEND
	{ "slurm-sbatch@avx2", sbatch_scripts_tests, TEST_NEEDS_CLUSTER, 240, 0,
	  CAP_AVX2, NULL, cpu_isa_cap_redundant },
#endif
	{ "slurm-e2e-gpu", e2e_gpu_tests, TEST_NEEDS_CLUSTER, 900, 0,
	  .stress = 1 },
#endif
#ifdef HVD_HAVE_CHECK
	{ "slurm-check", check_slurm_tests, TEST_NEEDS_CLUSTER, 120, 0 },
#endif
	/* real Slurm: the one-node cluster with task/cgroup,task/affinity */
	{ "slurm-cgroup", cgroup_slurm_tests, TEST_NEEDS_CLUSTER_CGROUP, 120, 0 },
	{ "slurm-affinity", affinity_slurm_tests, TEST_NEEDS_CLUSTER_AFFINITY, 90, 0 },
	/* hidden: a group that must fail, run by the runner tests */
	{ "selftest", selftest_tests, TEST_NEEDS_NOTHING, 3, 1 },
	{ "selftest-beside", selftest_beside_tests, TEST_NEEDS_NOTHING, 10, 1, .beside = 1 },
	{ "selftest-beside-too", selftest_beside_too_tests, TEST_NEEDS_NOTHING, 10, 1, .beside = 1 },
	{ "selftest-quick-beside", selftest_beside_too_tests, TEST_NEEDS_NOTHING, 10, 1,
	  .beside = BESIDE_IN_QUICK },
	{ "selftest-hang", selftest_hang_tests, TEST_NEEDS_NOTHING, 60, 1,
	  .deadline_s = 3 },
	{ "selftest-lane-stress", selftest_stress_tests, TEST_NEEDS_NOTHING, 10, 1, .beside = 1,
	  .stress = 1, .stress_matching = "nothing to match|under_stress|busy" },
	{ "selftest-next", selftest_next_tests, TEST_NEEDS_NOTHING, 10, 1 },
	{ "selftest-cluster-beside", selftest_cluster_beside_tests, TEST_NEEDS_CLUSTER_AFFINITY, 120, 1,
	  .beside = 1 },
	{ "selftest-cluster-hang", selftest_cluster_hang_tests, TEST_NEEDS_CLUSTER, 600, 1,
	  .deadline_s = 8 },
	{ "selftest-cluster-leftjob", selftest_cluster_leftjob_tests, TEST_NEEDS_CLUSTER, 60, 1 },
	{ "selftest-stress", selftest_stress_tests, TEST_NEEDS_NOTHING, 10, 1, .stress = 1,
	  .stress_matching = "nothing to match|under_stress|busy" },
	{ 0 }
};
#pragma GCC diagnostic pop

#endif
