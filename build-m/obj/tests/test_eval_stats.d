build-m/obj/tests/test_eval_stats.o: tests/test_eval_stats.c \
 tests/runner.h trainer/train/auroc.h trainer/train/eval_bootstrap.h \
 trainer/base/error.h trainer/train/eval_calibration.h \
 trainer/train/eval_curves.h trainer/train/eval_thresholds.h \
 trainer/base/rng.h
tests/runner.h:
trainer/train/auroc.h:
trainer/train/eval_bootstrap.h:
trainer/base/error.h:
trainer/train/eval_calibration.h:
trainer/train/eval_curves.h:
trainer/train/eval_thresholds.h:
trainer/base/rng.h:
