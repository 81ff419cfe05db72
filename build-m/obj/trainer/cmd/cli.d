build-m/obj/trainer/cmd/cli.o: trainer/cmd/cli.c trainer/cmd/cli.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/train/optim.h trainer/train/hooks.h \
 trainer/train/progress.h trainer/train/schedule.h trainer/base/args.h
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/train/progress.h:
trainer/train/schedule.h:
trainer/base/args.h:
