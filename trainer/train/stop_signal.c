/* stop_signal.c - the SIGTERM/SIGUSR1/SIGINT flag (see stop_signal.h).
 * The handler only stores the signal number, or (a second SIGINT) writes
 * one line and _exits: async-signal-safe.
 * What it does not do: print, save or exit (the training loop does).
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "train/stop_signal.h"

static volatile sig_atomic_t received;
static int interrupts;      /* SIGINT is a stop request (train) */

static const sigset_t *mask(void)
{
	static sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	if (interrupts)
		sigaddset(&set, SIGINT);
	return &set;
}

static void on_signal(int sig)
{
	static const char again[] = "\nchexnet: SIGINT again: exit 130 at once, no checkpoint\n";

	if (sig == SIGINT && received) {
		ssize_t n = write(2, again, sizeof(again) - 1);
		(void)n;
		_exit(130);
	}
	static const char first[] = "\nchexnet: SIGINT: stopping after this step with a "
				    "checkpoint (Ctrl-C again: exit 130 at once)\n";

	if (sig == SIGINT) {
		ssize_t n = write(2, first, sizeof(first) - 1);
		(void)n;
	}
	if (!received)
		received = sig;
}

int stop_signal_install(int interrupt)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	received = 0;
	struct sigaction was;
	/* an ignored SIGINT (a background job of a shell, nohup) stays ignored */
	interrupts = interrupt && sigaction(SIGINT, NULL, &was) == 0 && was.sa_handler != SIG_IGN;
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGUSR1, &sa, NULL) ||
	    (interrupts && sigaction(SIGINT, &sa, NULL)))
		return -1;
	return pthread_sigmask(SIG_BLOCK, mask(), NULL) ? -1 : 0;
}

void stop_signal_hold(void)
{
	pthread_sigmask(SIG_BLOCK, mask(), NULL);
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
	if (interrupts)
		signal(SIGINT, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, mask(), NULL);
	interrupts = 0;
}
