/* base/args.h - strict option values for the pipeline's commands: the
 * whole string must be a number in range, else a one-line error naming the
 * option and the value; the allowed CPUs; output directories of the commands.
 * What this is not: an option table.
 */
#ifndef HVD_TRAINER_DATA_ARGS_H
#define HVD_TRAINER_DATA_ARGS_H

#include <stddef.h>
#include <stdint.h>

int data_arg_long(const char *option, const char *value, long lo, long hi, long *out,
		  char *err, size_t err_bytes);
int data_arg_double(const char *option, const char *value, double lo, double hi, double *out,
		    char *err, size_t err_bytes);
int data_arg_u64(const char *option, const char *value, uint64_t *out, char *err, size_t err_bytes);

/* Number of CPUs this process may run on (sched_getaffinity), >= 1. */
int data_allowed_cpus(void);

/* Creates directory path unless it exists; 0, or -1 with
 * `chexnet: <what> '<path>': <reason>` (also when path is not a directory). */
int data_make_dir(const char *what, const char *path, char *err, size_t err_bytes);

#endif
