/* stop_signal.c - the SIGTERM/SIGUSR1 flag (see stop_signal.h). The
 * handler only stores the signal number: async-signal-safe.
 * What it does not do: print, save or exit (the training loop does).
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "train/stop_signal.h"

static volatile sig_atomic_t received;

static const sigset_t *mask(void)
{
	static sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	return &set;
}

static void on_signal(int sig)
{
	if (!received)
		received = sig;
}

int stop_signal_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	received = 0;
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGUSR1, &sa, NULL))
		return -1;
	return pthread_sigmask(SIG_BLOCK, mask(), NULL) ? -1 : 0;
}

void stop_signal_listen(void)
{
	pthread_sigmask(SIG_UNBLOCK, mask(), NULL);
}

int stop_signal_received(void)
{
	return received;
}

void stop_signal_uninstall(void)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, mask(), NULL);
}
