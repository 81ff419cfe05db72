/* collective.h - hvd-check's collectives on the backend libhvd chose. */
#ifndef HVD_CHECK_COLLECTIVE_H
#define HVD_CHECK_COLLECTIVE_H

#include <stddef.h>

#include "record.h"

/* A sum of known values over every rank; a wrong sum is recorded in r.
 * -1 (err says why) when the collective itself failed. */
int check_allreduce(struct check_record *r, char *err, size_t err_len);
/* Every rank's record into all (hvd_size() of them), in rank order. */
int check_gather(const struct check_record *mine, struct check_record *all, char *err,
		 size_t err_len);

#endif
