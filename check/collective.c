/* collective.c - the allreduce and the gather of hvd-check (collective.h),
 * in device memory when the backend is NCCL, else in host memory.
 * Rank r adds (r+1)*(i+1) at element i, so element i must come back as
 * (i+1)*S*(S+1)/2 on every rank of S.
 * What it does not do: start or stop the runtime (main.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "collective.h"
#include "hvd.h"

#define SUM_COUNT 256

static int on_device(void)
{
	return strcmp(hvd_backend_name(), "nccl") == 0;
}

static int hvd_failed(int rc, char *err, size_t err_len)
{
	if (rc != HVD_OK)
		snprintf(err, err_len, "%s", hvd_error());
	return rc != HVD_OK;
}

static void check_sums(struct check_record *r, const int64_t *got)
{
	int64_t size = hvd_size();
	for (int i = 0; i < SUM_COUNT; i++) {
		int64_t want = (int64_t)(i + 1) * size * (size + 1) / 2;
		if (got[i] != want) {
			check_record_fail(r, "allreduce: 'element %d': %lld, want %lld (backend %s)", i,
					  (long long)got[i], (long long)want, hvd_backend_name());
			return;
		}
	}
}

int check_allreduce(struct check_record *r, char *err, size_t err_len)
{
	int64_t vals[SUM_COUNT];
	int dev = on_device(), rc = -1;
	for (int i = 0; i < SUM_COUNT; i++)
		vals[i] = (int64_t)(hvd_rank() + 1) * (i + 1);
	void *buf = check_buffer_new(sizeof(vals), dev, err, err_len);
	if (buf && check_buffer_put(buf, vals, sizeof(vals), dev, err, err_len) == 0 &&
	    !hvd_failed(hvd_allreduce("hvd-check.sum", buf, SUM_COUNT, HVD_I64, HVD_SUM), err,
			err_len) &&
	    check_buffer_get(vals, buf, sizeof(vals), dev, err, err_len) == 0) {
		check_sums(r, vals);
		rc = 0;
	}
	check_buffer_free(buf, dev);
	return rc;
}

int check_gather(const struct check_record *mine, struct check_record *all, char *err,
		 size_t err_len)
{
	size_t one = sizeof(*mine), total = one * (size_t)hvd_size();
	int dev = on_device(), rc = -1;
	char *buf = check_buffer_new(one + total, dev, err, err_len);
	if (buf && check_buffer_put(buf, mine, one, dev, err, err_len) == 0 &&
	    !hvd_failed(hvd_allgatherv("hvd-check.records", buf, CHECK_RECORD_INTS, buf + one,
				       (size_t)CHECK_RECORD_INTS * (size_t)hvd_size(), NULL, HVD_I32),
			err, err_len) &&
	    check_buffer_get(all, buf + one, total, dev, err, err_len) == 0)
		rc = 0;
	check_buffer_free(buf, dev);
	return rc;
}
