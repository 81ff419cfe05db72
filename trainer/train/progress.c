/* progress.c - formats one progress line (text or JSON lines).
 * What it does not do: measure time (the training loop does).
 */
#include "train/progress.h"

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
		fprintf(f, "%sepoch %d/%d step %ld/%ld loss %.4f lr %.3g %.1f img/s "
			"data-wait %.0f%% ETA %.0fs\n", p->epoch_end ? "end of " : "",
			p->epoch, p->epochs, p->step, p->steps, p->loss, p->lr,
			p->images_per_s, p->data_wait_pct, p->eta_s);
	}
	fflush(f);
}
