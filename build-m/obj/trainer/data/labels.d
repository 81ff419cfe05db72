build-m/obj/trainer/data/labels.o: trainer/data/labels.c \
 trainer/data/labels.h trainer/base/batch.h trainer/base/classes.h
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
