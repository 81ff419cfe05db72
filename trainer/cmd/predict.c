/* cmd/predict.c - `chexnet predict CHECKPOINT IMAGE...`: each image's
 * centre view through the checkpoint's model (the view training had:
 * cmd/checkpoint_defaults.h), 14 probabilities a line
 * (with the checkpoint's thresholds when it has them: cmd/predict_output.h),
 * and with --cam the class activation maps (cmd/predict_cam.h). SIGTERM
 * or SIGUSR1 stops between images with CHEXNET_EXIT_PREEMPTED.
 * What it does not do: evaluate a split (cmd/eval.c) or train.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/checkpoint.h"
#include "data/codec/image_decode.h"
#include "model/loss.h"
#include "cmd/run.h"
#include "loop/session.h"
#include "cmd/checkpoint_defaults.h"
#include "cmd/predict_cam.h"
#include "cmd/predict_output.h"
#include "train/stop_signal.h"

/* One image through the model in eval mode, in the checkpoint's view d
 * (stored size, aspect); prints the path and 14 probabilities; the CAM
 * pictures when pc is set. */
static int predict_one(struct session *s, struct batch *b, const struct data_config *d,
		       int input, const char *path, const struct thresholds *t, int json,
		       struct predict_cam *pc)
{
	struct trainer_error err = { "" };
	char msg[1024];
	float logits[CHEXNET_CLASSES];
	int stored = d->stored_size ? (int)d->stored_size : image_stored_side(b->size);

	if (image_load_view(path, b->size, stored, d->aspect, b->pixels, msg, sizeof(msg))) {
		fprintf(stderr, "%s\n", msg);
		return -1;
	}
	struct backend_input in = { .images = b, .count = 1 };
	if (s->ops->forward(s->backend, &in, 0, logits, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	float probs[CHEXNET_CLASSES];
	for (int c = 0; c < CHEXNET_CLASSES; c++)
		probs[c] = loss_sigmoid(logits[c]);
	predict_print(stdout, path, probs, t, json);
	if (pc && predict_cam_image(pc, s, b->pixels, b->size, input, path, probs, &err)) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		return -1;
	}
	return 0;
}

int run_predict(const struct settings *given)
{
	struct settings run = *given, *o = &run;
	struct session s;
	struct trainer_error err = { "" };
	int rc = 0;

	if (!o->checkpoint || o->input_count == 0) {
		fprintf(stderr, "chexnet: predict: need --checkpoint DIR and at least one IMAGE\n");
		return 2;
	}
	if ((rc = predict_cam_check(o)) || (rc = checkpoint_defaults(&run)))
		return rc;
	struct session_config one = o->train.session;
	one.batch = 1;
	one.params_given = 1;   /* the checkpoint's, loaded strictly */
	if (stop_signal_install(0)) {
		fprintf(stderr, "chexnet: predict: cannot install the SIGTERM/SIGUSR1 handlers: %s\n",
			strerror(errno));
		return 1;
	}
	if (session_open(&s, &one)) {
		stop_signal_uninstall();
		return 1;
	}
	stop_signal_listen();
	struct thresholds thr;
	struct predict_cam pc = { 0 };
	int have_thr = 0;
	if (checkpoint_load_model(o->checkpoint, &s.model, CHECKPOINT_STRICT, NULL, &err) ||
	    s.ops->load_params(s.backend, &err) ||
	    (have_thr = thresholds_load(o->checkpoint, s.model.desc.name, &thr, &err)) < 0 ||
	    (o->cam && predict_cam_open(&pc, o, &s, have_thr == 0 ? &thr : NULL, &err))) {
		fprintf(stderr, "chexnet: %s\n", err.msg);
		predict_cam_close(&pc);
		session_close(&s);
		stop_signal_uninstall();
		return 1;
	}
	struct batch b = { .count = 1, .capacity = 1, .size = (int)o->train.session.size };
	b.pixels = malloc((size_t)o->train.session.size * o->train.session.size);
	int json = o->train.progress == PROGRESS_JSON;
	struct data_config view = o->train.data;
	predict_print_header(stdout, json);
	for (int i = 0; i < o->input_count && b.pixels && rc != CHEXNET_EXIT_PREEMPTED; i++) {
		if (stop_signal_received()) {
			fprintf(stderr, "chexnet: predict: interrupted (%s) after %d of %d images; exit %d\n",
				stop_signal_received() == SIGTERM ? "SIGTERM" : "SIGUSR1", i,
				o->input_count, CHEXNET_EXIT_PREEMPTED);
			rc = CHEXNET_EXIT_PREEMPTED;
		} else if (predict_one(&s, &b, &view, i, o->inputs[i], have_thr == 0 ? &thr : NULL, json,
				       o->cam ? &pc : NULL)) {
			rc = 1;
		}
	}
	free(b.pixels);
	predict_cam_close(&pc);
	session_close(&s);
	stop_signal_uninstall();
	return rc;
}
