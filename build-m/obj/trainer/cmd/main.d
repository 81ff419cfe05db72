build-m/obj/trainer/cmd/main.o: trainer/cmd/main.c trainer/cmd/cli.h \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/train/optim.h trainer/train/hooks.h \
 trainer/train/progress.h trainer/train/schedule.h \
 trainer/cmd/data_cmds.h trainer/train/dist.h trainer/cmd/run.h
trainer/cmd/cli.h:
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/train/optim.h:
trainer/train/hooks.h:
trainer/train/progress.h:
trainer/train/schedule.h:
trainer/cmd/data_cmds.h:
trainer/train/dist.h:
trainer/cmd/run.h:
