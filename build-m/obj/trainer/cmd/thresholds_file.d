build-m/obj/trainer/cmd/thresholds_file.o: trainer/cmd/thresholds_file.c \
 trainer/base/crc32c.h trainer/data/labels.h trainer/base/batch.h \
 trainer/base/classes.h trainer/cmd/thresholds_file.h \
 trainer/base/error.h trainer/train/eval_thresholds.h
trainer/base/crc32c.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/cmd/thresholds_file.h:
trainer/base/error.h:
trainer/train/eval_thresholds.h:
