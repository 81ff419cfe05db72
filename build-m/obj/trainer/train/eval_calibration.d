build-m/obj/trainer/train/eval_calibration.o: \
 trainer/train/eval_calibration.c trainer/train/eval_calibration.h
trainer/train/eval_calibration.h:
