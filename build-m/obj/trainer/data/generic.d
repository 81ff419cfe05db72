build-m/obj/trainer/data/generic.o: trainer/data/generic.c \
 trainer/data/csv.h trainer/data/labels.h trainer/base/batch.h \
 trainer/base/classes.h trainer/data/path_check.h trainer/data/set.h \
 trainer/data/list.h trainer/data/split.h
trainer/data/csv.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/path_check.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/split.h:
