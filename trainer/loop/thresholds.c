/* loop/thresholds.c - operating thresholds chosen on an evaluation's kept
 * outputs and stored with a checkpoint (eval --choose-thresholds, and
 * train at each new best epoch).
 * What it does not do: the choice's statistics (eval/thresholds.h) or the
 * file format (eval/thresholds_file.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/loss.h"
#include "loop/thresholds.h"

struct threshold_choice eval_threshold_rule(double sensitivity, double specificity)
{
	if (sensitivity > 0)
		return (struct threshold_choice){ THRESHOLD_SENSITIVITY, sensitivity };
	if (specificity > 0)
		return (struct threshold_choice){ THRESHOLD_SPECIFICITY, specificity };
	return (struct threshold_choice){ THRESHOLD_YOUDEN, 0 };
}

int eval_store_thresholds(const char *checkpoint, const char *model, const char *split,
			  const struct threshold_choice *rule, const struct evaluation *ev,
			  struct thresholds *out)
{
	struct trainer_error err = { "" };
	size_t values = ev->images * CHEXNET_CLASSES;
	float *p = malloc(values * sizeof(float) + 1);

	if (!p) {
		fprintf(stderr, "chexnet: thresholds: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < values; i++)
		p[i] = loss_sigmoid(ev->logits[i]);
	memset(out, 0, sizeof(*out));
	snprintf(out->model, sizeof(out->model), "%s", model);
	snprintf(out->split, sizeof(out->split), "%s", split);
	out->rule = *rule;
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		out->value[c] = eval_threshold_choose(p + c, ev->labels + c, ev->images,
						      CHEXNET_CLASSES, rule);
	free(p);
	if (thresholds_save(checkpoint, out, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

int eval_train_thresholds(const struct train_config *c, int rank, const char *model,
			  const struct evaluation *ev)
{
	char best[4096];
	struct thresholds t;
	struct threshold_choice rule = eval_threshold_rule(c->sensitivity, c->specificity);

	if (rank != 0 || !c->out)
		return 0;
	snprintf(best, sizeof(best), "%s/best", c->out);
	return eval_store_thresholds(best, model, "val", &rule, ev, &t);
}
