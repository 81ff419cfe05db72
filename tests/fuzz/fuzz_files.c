/* fuzz_files.c - scratch files and seeds for the file-reader fuzz targets
 * (see fuzz_files.h).
 * What it does not do: anything libFuzzer does (mutation, corpus merge).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_files.h"

static char scratch[512];

static void remove_scratch(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: cannot remove %s\n", scratch);
}

const char *fuzz_dir(void)
{
	if (!scratch[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(scratch, sizeof(scratch), "%s/hvd-fuzz-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(scratch))
			abort();
		atexit(remove_scratch);
	}
	return scratch;
}

const char *fuzz_write(const char *name, const void *data, size_t bytes)
{
	static char path[1024];
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f || (bytes && fwrite(data, 1, bytes, f) != bytes) || fclose(f) != 0)
		abort();
	return path;
}

const char *fuzz_empty_corpus(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (argv[i][0] == '-' || stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		int empty = 1;
		while (d && (e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = 0;
		if (d)
			closedir(d);
		return empty ? argv[i] : NULL;
	}
	return NULL;
}

void fuzz_seed(const char *dir, const char *name, const void *data, size_t bytes)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, bytes, f);
		fclose(f);
	}
}
