build-m/obj/trainer/cmd/bench.o: trainer/cmd/bench.c \
 trainer/train/checkpoint.h trainer/base/error.h trainer/model/model.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/base/rng.h \
 trainer/train/schedule.h trainer/data/labels.h trainer/base/batch.h \
 trainer/base/classes.h trainer/data/image_decode.h trainer/model/loss.h \
 trainer/cmd/run.h trainer/cmd/cli.h trainer/backend/backend.h \
 trainer/train/progress.h trainer/cmd/common.h trainer/base/clock.h \
 trainer/data/loader.h trainer/train/auroc.h trainer/cmd/train_gpu.h \
 trainer/train/grad_sync.h trainer/train/dist.h trainer/train/verdict.h \
 trainer/cmd/predict_output.h trainer/cmd/thresholds_file.h \
 trainer/train/eval_thresholds.h trainer/train/stop_signal.h
trainer/train/checkpoint.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/base/rng.h:
trainer/train/schedule.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/image_decode.h:
trainer/model/loss.h:
trainer/cmd/run.h:
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/train/progress.h:
trainer/cmd/common.h:
trainer/base/clock.h:
trainer/data/loader.h:
trainer/train/auroc.h:
trainer/cmd/train_gpu.h:
trainer/train/grad_sync.h:
trainer/train/dist.h:
trainer/train/verdict.h:
trainer/cmd/predict_output.h:
trainer/cmd/thresholds_file.h:
trainer/train/eval_thresholds.h:
trainer/train/stop_signal.h:
