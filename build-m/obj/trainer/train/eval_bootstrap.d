build-m/obj/trainer/train/eval_bootstrap.o: \
 trainer/train/eval_bootstrap.c trainer/train/auroc.h \
 trainer/train/eval_bootstrap.h trainer/base/error.h trainer/base/rng.h
trainer/train/auroc.h:
trainer/train/eval_bootstrap.h:
trainer/base/error.h:
trainer/base/rng.h:
