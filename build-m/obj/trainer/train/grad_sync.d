build-m/obj/trainer/train/grad_sync.o: trainer/train/grad_sync.c \
 trainer/train/grad_sync.h trainer/train/dist.h trainer/train/hooks.h \
 trainer/model/model.h trainer/base/error.h
trainer/train/grad_sync.h:
trainer/train/dist.h:
trainer/train/hooks.h:
trainer/model/model.h:
trainer/base/error.h:
