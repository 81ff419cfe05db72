build-m/obj/trainer/train/auroc.o: trainer/train/auroc.c \
 trainer/base/classes.h trainer/base/batch.h trainer/train/auroc.h
trainer/base/classes.h:
trainer/base/batch.h:
trainer/train/auroc.h:
