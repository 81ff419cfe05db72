/* buffer.c - host or CUDA memory for hvd-check's collectives (buffer.h).
 * Device memory exists only in builds with CUDA (HAVE_CUDA): without it a
 * request for device memory is an error, never host memory in disguise.
 * What it does not do: choose the backend (libhvd does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

static int cuda_ok(cudaError_t rc, const char *what, char *err, size_t err_len)
{
	if (rc == cudaSuccess)
		return 0;
	snprintf(err, err_len, "cuda: '%s': %s", what, cudaGetErrorString(rc));
	return -1;
}
#endif

void *check_buffer_new(size_t bytes, int on_device, char *err, size_t err_len)
{
	void *p = NULL;
	if (!on_device) {
		p = calloc(1, bytes);
		if (!p)
			snprintf(err, err_len, "memory: '%zu bytes': out of memory", bytes);
		return p;
	}
#ifdef HAVE_CUDA
	return cuda_ok(cudaMalloc(&p, bytes), "cudaMalloc", err, err_len) ? NULL : p;
#else
	snprintf(err, err_len, "backend: 'nccl': hvd-check was built without CUDA");
	return NULL;
#endif
}

static int copy(void *dst, const void *src, size_t bytes, int on_device, int to_device,
		char *err, size_t err_len)
{
	if (!on_device) {
		memcpy(dst, src, bytes);
		return 0;
	}
#ifdef HAVE_CUDA
	return cuda_ok(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice
				  : cudaMemcpyDeviceToHost), "cudaMemcpy", err, err_len);
#else
	(void)to_device;
	snprintf(err, err_len, "backend: 'nccl': hvd-check was built without CUDA");
	return -1;
#endif
}

int check_buffer_put(void *dst, const void *src, size_t bytes, int on_device, char *err,
		     size_t err_len)
{
	return copy(dst, src, bytes, on_device, 1, err, err_len);
}

int check_buffer_get(void *dst, const void *src, size_t bytes, int on_device, char *err,
		     size_t err_len)
{
	return copy(dst, src, bytes, on_device, 0, err, err_len);
}

void check_buffer_free(void *buf, int on_device)
{
	if (!on_device)
		free(buf);
#ifdef HAVE_CUDA
	else if (buf)
		cudaFree(buf);
#endif
}
