/* progress.c - formats one progress line (text or JSON lines); a text
 * line to a stream that is not a terminal (a batch job's log) starts
 * with the time, ISO-8601 UTC.
 * What it does not do: measure time (the training loop does).
 */
#include <time.h>
#include <unistd.h>

#include "train/progress.h"

/* "2026-11-23T22:49:31Z " before a text line in a log file. */
static void stamp(FILE *f)
{
	char text[32];
	struct tm tm;
	time_t t = time(NULL);

	int fd = fileno(f);

	if (isatty(fd >= 0 ? fd : 2))   /* no descriptor: stderr kept by a tee over fd 2 */
		return;
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ ", gmtime_r(&t, &tm));
	fputs(text, f);
}

void progress_print(FILE *f, enum progress_mode mode, const struct progress_point *p)
{
	if (mode == PROGRESS_QUIET)
		return;
	if (mode == PROGRESS_JSON) {
		fprintf(f, "{\"event\":\"%s\",\"epoch\":%d,\"step\":%ld,\"steps\":%ld,"
			"\"loss\":%.6g,\"lr\":%.6g,\"images_per_s\":%.3f,"
			"\"data_wait_pct\":%.2f,\"eta_s\":%.1f}\n",
			p->epoch_end ? "epoch" : "step", p->epoch, p->step, p->steps, p->loss,
			p->lr, p->images_per_s, p->data_wait_pct, p->eta_s);
	} else {
		stamp(f);
		fprintf(f, "%sepoch %d/%d step %ld/%ld loss %.4f lr %.3g %.1f img/s "
			"data-wait %.0f%% ETA %.0fs\n", p->epoch_end ? "end of " : "",
			p->epoch, p->epochs, p->step, p->steps, p->loss, p->lr,
			p->images_per_s, p->data_wait_pct, p->eta_s);
	}
	fflush(f);
}
