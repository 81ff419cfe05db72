build-m/obj/trainer/cmd/train_diverge.o: trainer/cmd/train_diverge.c \
 trainer/cmd/train_diverge.h trainer/cmd/cli.h trainer/backend/backend.h \
 trainer/base/batch.h trainer/base/error.h trainer/model/model.h \
 trainer/train/optim.h trainer/train/hooks.h trainer/train/progress.h \
 trainer/train/schedule.h
trainer/cmd/train_diverge.h:
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/train/progress.h:
trainer/train/schedule.h:
