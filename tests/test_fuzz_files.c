/* test_fuzz_files.c - runs the libFuzzer targets of the trainer's readers
 * of untrusted files (tests/fuzz/fuzz_*.c: image decoding, CSV and list
 * files, pack index and shards, safetensors and training state, DICOM, a
 * run's run.json, metrics.csv and TensorBoard event files, the gpu
 * backend's cache of timed convolution algorithms, the recipes of
 * --config), each for
 * FUZZ_S seconds (default 5; FUZZ_S=600 for a long run) from its built-in
 * seeds, under ASan and UBSan, and checks it found nothing. Skipped where
 * clang's libFuzzer is missing. Findings are kept as regression cases in
 * test_malformed.c and test_malformed_data.c, which run without clang.
 * What it does not do: keep a corpus between runs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

static void fuzz(const char *target)
{
	char bin[4200];
	snprintf(bin, sizeof(bin), "%s/fuzz-%s", test_build_dir(), target);
	if (access(bin, X_OK)) {
		SKIP("no build/fuzz-%s: clang's libFuzzer not found (make test-deps installs clang)", target);
	}
	const char *s = getenv("FUZZ_S");
	int secs = s && atoi(s) > 0 ? atoi(s) : 5;
	char *cmd = NULL, *corpus = test_path(test_tmpdir(), "corpus");
	CHECK(mkdir(corpus, 0755) == 0);
	CHECK(asprintf(&cmd, "cd '%s' && TMPDIR='%s' ASAN_OPTIONS=detect_leaks=1 '%s' -max_total_time=%d "
		       "-rss_limit_mb=2048 -print_final_stats=1 corpus", test_tmpdir(), test_tmpdir(), bin,
		       secs) > 0);
	struct test_proc p;
	CHECK(test_run(cmd, secs + 60, &p) == 0);
	CHECK_MSG(p.exit_code == 0, "fuzz-%s: exit %d: %.3000s", target, p.exit_code, p.err);
	CHECK_CONTAINS(p.err, "Done ");
	CHECK_CONTAINS(p.err, "seed corpus: files: ");   /* it started from the seeds */
	free(cmd);
	free(corpus);
	test_proc_free(&p);
}

static void test_image_decoding_survives_fuzzing(void) { fuzz("image"); }
static void test_csv_and_list_files_survive_fuzzing(void) { fuzz("tables"); }
static void test_pack_index_and_shards_survive_fuzzing(void) { fuzz("pack"); }
static void test_safetensors_and_training_state_survive_fuzzing(void) { fuzz("safetensors"); }
static void test_dicom_files_and_pipeline_survive_fuzzing(void) { fuzz("dicom"); }
static void test_run_records_and_survivors_summary_survive_fuzzing(void) { fuzz("records"); }
static void test_conv_algorithm_cache_survives_fuzzing(void) { fuzz("algo-cache"); }
static void test_recipe_files_survive_fuzzing(void) { fuzz("recipe"); }

const struct test_case fuzz_files_tests[] = {
	{ "image_decoding_survives_fuzzing", test_image_decoding_survives_fuzzing },
	{ "csv_and_list_files_survive_fuzzing", test_csv_and_list_files_survive_fuzzing },
	{ "pack_index_and_shards_survive_fuzzing", test_pack_index_and_shards_survive_fuzzing },
	{ "safetensors_and_training_state_survive_fuzzing",
	  test_safetensors_and_training_state_survive_fuzzing },
	{ "dicom_files_and_pipeline_survive_fuzzing", test_dicom_files_and_pipeline_survive_fuzzing },
	{ "run_records_and_survivors_summary_survive_fuzzing",
	  test_run_records_and_survivors_summary_survive_fuzzing },
	{ "conv_algorithm_cache_survives_fuzzing", test_conv_algorithm_cache_survives_fuzzing },
	{ "recipe_files_survive_fuzzing", test_recipe_files_survive_fuzzing },
	{ 0 }
};
