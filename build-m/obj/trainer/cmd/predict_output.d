build-m/obj/trainer/cmd/predict_output.o: trainer/cmd/predict_output.c \
 trainer/data/labels.h trainer/base/batch.h trainer/base/classes.h \
 trainer/cmd/predict_output.h trainer/cmd/thresholds_file.h \
 trainer/base/error.h trainer/train/eval_thresholds.h
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/cmd/predict_output.h:
trainer/cmd/thresholds_file.h:
trainer/base/error.h:
trainer/train/eval_thresholds.h:
