/* base/args.c - strict number parsing for command options, allowed CPUs,
 * output directories.
 * What it does not do: iterate argv (each cmd_*.c does).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/args.h"

int data_arg_long(const char *option, const char *value, long lo, long hi, long *out,
		  char *err, size_t err_bytes)
{
	char *end = NULL;
	errno = 0;
	long v = value ? strtol(value, &end, 10) : 0;
	if (!value || !*value || *end || errno || v < lo || v > hi) {
		snprintf(err, err_bytes, "chexnet: %s '%s': expected an integer in %ld..%ld", option,
			 value ? value : "", lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int data_arg_double(const char *option, const char *value, double lo, double hi, double *out,
		    char *err, size_t err_bytes)
{
	char *end = NULL;
	errno = 0;
	double v = value ? strtod(value, &end) : 0;
	if (!value || !*value || *end || errno || !isfinite(v) || v < lo || v > hi) {
		snprintf(err, err_bytes, "chexnet: %s '%s': expected a number in [%g, %g]", option,
			 value ? value : "", lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int data_arg_u64(const char *option, const char *value, uint64_t *out, char *err, size_t err_bytes)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = value ? strtoull(value, &end, 10) : 0;
	if (!value || *value < '0' || *value > '9' || *end || errno) {
		snprintf(err, err_bytes, "chexnet: %s '%s': expected a non-negative integer", option,
			 value ? value : "");
		return -1;
	}
	*out = v;
	return 0;
}

int data_allowed_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

int data_make_dir(const char *what, const char *path, char *err, size_t err_bytes)
{
	struct stat st;
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		snprintf(err, err_bytes, "chexnet: %s '%s': %s", what, path, strerror(errno));
		return -1;
	}
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, err_bytes, "chexnet: %s '%s': not a directory", what, path);
		return -1;
	}
	return 0;
}
