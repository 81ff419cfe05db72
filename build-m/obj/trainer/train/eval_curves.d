build-m/obj/trainer/train/eval_curves.o: trainer/train/eval_curves.c \
 trainer/train/auroc.h trainer/train/eval_curves.h
trainer/train/auroc.h:
trainer/train/eval_curves.h:
