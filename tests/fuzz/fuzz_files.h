/* fuzz_files.h - what the trainer's file-reader fuzz targets share: one
 * scratch directory per process (the readers take paths), writing an
 * input there, and seeding an empty corpus directory with valid files so
 * that the fuzzer starts from inputs that get past the first checks.
 * What this is not: a fuzz target (fuzz_*.c).
 */
#ifndef HVD_TESTS_FUZZ_FILES_H
#define HVD_TESTS_FUZZ_FILES_H

#include <stddef.h>
#include <stdint.h>

/* The scratch directory (created on first use, removed at exit). */
const char *fuzz_dir(void);

/* Writes bytes to fuzz_dir()/name; returns the full path (static buffer). */
const char *fuzz_write(const char *name, const void *data, size_t bytes);

/* The first corpus directory among libFuzzer's arguments when it exists
 * and is empty, else NULL: where a target puts its seeds. */
const char *fuzz_empty_corpus(int argc, char **argv);

/* Writes a seed file dir/name. */
void fuzz_seed(const char *dir, const char *name, const void *data, size_t bytes);

#endif
