/* cpu_isa_caps.c - see cpu_isa_caps.h. oneDNN fixes its ISA at the first
 * query and a forked child inherits that, so every probe runs in a child
 * of its own that reports through a pipe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "cpu_isa_caps.h"
#include "backend/cpu/cpu_isa.h"

int cpu_isa_effective_in_child(const char *env)
{
	int fd[2];
	int isa = -1;
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		unsetenv("ONEDNN_MAX_CPU_ISA");
		unsetenv("DNNL_MAX_CPU_ISA");
		if (env)
			putenv((char *)env);
		int v = (int)dnnl_get_effective_cpu_isa();
		_exit(write(fd[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &isa, sizeof(isa)) != sizeof(isa))
		isa = -1;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return isa;
}

const char *cpu_isa_cap_redundant(const char *env)
{
	static char why[256];
	int native = cpu_isa_effective_in_child(NULL),
	    capped = cpu_isa_effective_in_child(env);
	if (native < 0 || capped < 0)
		return NULL;  /* let the cases run and say what fails */
	if (native != capped)
		return NULL;
	snprintf(why, sizeof(why), "%s does not lower this machine's ISA (%s): the native "
		 "run of these cases is this run", env, cpu_isa_name((dnnl_cpu_isa_t)native));
	return why;
}

/* The cpu backend's probe of bf16 under the current ISA: 0 where it takes
 * it (native_only: only where computed natively), else its refusal in err. */
static int bf16_probe(int native_only, struct trainer_error *err)
{
	struct backend_options opt = { .max_batch = 1, .precision = PRECISION_BF16,
				       .native_only = native_only };
	char what[96];
	return backend_cpu_ops.probe(&opt, what, sizeof(what), err);
}

int cpu_bf16_native(void)
{
	struct trainer_error err = { "" };
	return bf16_probe(1, &err) == 0;
}

int cpu_bf16_missing(char *why, size_t len)
{
	struct trainer_error err = { "" };
	if (bf16_probe(0, &err) == 0)
		return 0;
	snprintf(why, len, "%s", err.msg);
	return 1;
}
