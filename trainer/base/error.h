/* error.h - how trainer library code reports a failure to its caller.
 *
 * Library functions (model, backends, checkpoints, optimizer) never print
 * and never exit: they return -1 (or NULL) and leave one line in a
 * struct trainer_error, written `what: 'value': reason` without the
 * `chexnet: ` prefix, which main() adds when it prints. What this is not:
 * logging or progress output (progress.h).
 */
#ifndef HVD_TRAINER_ERROR_H
#define HVD_TRAINER_ERROR_H

#define TRAINER_ERROR_LEN 384

struct trainer_error {
	char msg[TRAINER_ERROR_LEN];
};

/* Format the message into err (if err is not NULL); always returns -1 so
 * callers can write `return trainer_error_set(err, ...);`. */
int trainer_error_set(struct trainer_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
