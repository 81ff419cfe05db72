/* gpu_cublas.c - cuBLAS opened on the backend's first cuBLAS call, not at
 * program start. Linked, libcublas.so (and the libcublasLt.so it needs)
 * is loaded and relocated by every chexnet and hvdtest start, whatever
 * the backend: about 0.13 s and 28,000 page faults each on an EPYC Zen 3,
 * paid by `--backend cpu` runs that never touch a GPU.
 *
 * The six functions the gpu backend calls are defined here under cuBLAS's
 * own names and prototypes (its header checks them), each forwarding to
 * the library's entry point, resolved once with dlopen/dlsym. When the
 * library or an entry point is missing, every call returns
 * CUBLAS_STATUS_NOT_INITIALIZED and cublasGetStatusString says why (the
 * soname and dlerror's text), so GPU_CUBLAS's message names it.
 * Not in the emulated build (GPU_EMU=1): its archive defines these names.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <cublas_v2.h>

#define CUBLAS_STR_(x) #x
#define CUBLAS_STR(x) CUBLAS_STR_(x)
#define CUBLAS_SONAME "libcublas.so." CUBLAS_STR(CUBLAS_VER_MAJOR)

static struct {
	cublasStatus_t (*create)(cublasHandle_t *);
	cublasStatus_t (*destroy)(cublasHandle_t);
	cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
	cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);
	const char *(*status_string)(cublasStatus_t);
	cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
				  int, int, int, const void *, const void *, cudaDataType, int,
				  const void *, cudaDataType, int, const void *, void *,
				  cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
	int ok;
	char why[256];
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

/* dlsym into a typed function pointer (POSIX guarantees the conversion). */
static int resolve(void *handle, void *fn_ptr, const char *name)
{
	void *sym = dlsym(handle, name);

	if (!sym) {
		snprintf(lib.why, sizeof(lib.why), "'%s': '%s': not found", CUBLAS_SONAME, name);
		return -1;
	}
	*(void **)fn_ptr = sym;
	return 0;
}

static void lib_open(void)
{
	void *h = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(lib.why, sizeof(lib.why), "%s", dlerror());
		return;
	}
	lib.ok = !resolve(h, &lib.create, "cublasCreate_v2") &&
		 !resolve(h, &lib.destroy, "cublasDestroy_v2") &&
		 !resolve(h, &lib.set_stream, "cublasSetStream_v2") &&
		 !resolve(h, &lib.set_math_mode, "cublasSetMathMode") &&
		 !resolve(h, &lib.status_string, "cublasGetStatusString") &&
		 !resolve(h, &lib.gemm_ex, "cublasGemmEx");
	if (!lib.ok)
		dlclose(h);
}

static int lib_ready(void)
{
	pthread_once(&lib_once, lib_open);
	return lib.ok;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
	return lib_ready() ? lib.create(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
	return lib_ready() ? lib.destroy(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
	return lib_ready() ? lib.set_stream(handle, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	return lib_ready() ? lib.set_math_mode(handle, mode) : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
	return lib_ready() ? lib.status_string(status) : lib.why;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
			    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
			    int lda, const void *B, cudaDataType Btype, int ldb, const void *beta,
			    void *C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
			    cublasGemmAlgo_t algo)
{
	if (!lib_ready())
		return CUBLAS_STATUS_NOT_INITIALIZED;
	return lib.gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
			   beta, C, Ctype, ldc, computeType, algo);
}
