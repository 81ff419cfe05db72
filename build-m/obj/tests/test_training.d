build-m/obj/tests/test_training.o: tests/test_training.c tests/runner.h \
 trainer/train/auroc.h trainer/train/optim.h trainer/base/error.h \
 trainer/train/hooks.h trainer/train/schedule.h
tests/runner.h:
trainer/train/auroc.h:
trainer/train/optim.h:
trainer/base/error.h:
trainer/train/hooks.h:
trainer/train/schedule.h:
