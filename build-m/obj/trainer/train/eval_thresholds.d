build-m/obj/trainer/train/eval_thresholds.o: \
 trainer/train/eval_thresholds.c trainer/train/eval_thresholds.h
trainer/train/eval_thresholds.h:
