/* train/verdict.h - what every rank must agree on after each step,
 * as pure logic (unit-tested on the CPU, gpu-train): the small flag
 * vector each rank contributes to the one per-step average allreduce
 * (stop request, fp16 overflow), and the verdict read back from the
 * average: stop when any rank was asked to, skip the optimizer step when
 * any rank's gradients held inf/NaN. The flags are 0 or 1, so their
 * average is > 0 exactly when one rank's flag is 1 (a max-allreduce
 * through the average every backend has). Every rank reads the same
 * average, so every rank skips the same steps and drives its loss scaler
 * (gpu_loss_scale.h) with the same verdict: the scales never drift apart.
 * The loss is not in it: it stays on the backend and is read every N
 * steps (backend.h's loss_take, M3).
 * What this is not: the exchange itself (loop/train.c, dist.h).
 */
#ifndef HVD_TRAINER_RUN_TRAIN_VERDICT_H
#define HVD_TRAINER_RUN_TRAIN_VERDICT_H

enum { TRAIN_STAT_STOP, TRAIN_STAT_INF, TRAIN_STATS };

struct train_verdict {
	int stop;     /* some rank was asked to stop (SIGTERM, SIGUSR1) */
	int skip;     /* some rank's gradients overflowed: no optimizer step */
};

/* This rank's contribution. found_inf: any micro-batch of the step. */
void train_verdict_pack(float stats[TRAIN_STATS], int stop, int found_inf);
/* From the stats averaged over ranks. */
void train_verdict_read(const float averaged[TRAIN_STATS], struct train_verdict *v);

#endif
