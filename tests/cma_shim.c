/* cma_shim.c - LD_PRELOAD library for the slurm-runtime tests:
 * process_vm_readv fails with EPERM, as where Yama's ptrace_scope >= 1
 * forbids one process to read another's memory (root passes a
 * non-dumpable check, so this is the way to show it here). Built by the
 * test with cc -shared; not part of libhvd.
 * What it does not do: anything else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/uio.h>

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	errno = EPERM;
	return -1;
}
