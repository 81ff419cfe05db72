/* buffer.h - memory where the backend wants it: device memory for NCCL
 * (GPU builds), host memory for every other backend. */
#ifndef HVD_CHECK_BUFFER_H
#define HVD_CHECK_BUFFER_H

#include <stddef.h>

/* NULL (and a one-line message in err) when it cannot be had. */
void *check_buffer_new(size_t bytes, int on_device, char *err, size_t err_len);
int check_buffer_put(void *dst, const void *src, size_t bytes, int on_device, char *err,
		     size_t err_len);
int check_buffer_get(void *dst, const void *src, size_t bytes, int on_device, char *err,
		     size_t err_len);
void check_buffer_free(void *buf, int on_device);

#endif
