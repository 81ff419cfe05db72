build-m/obj/trainer/data/nih.o: trainer/data/nih.c trainer/data/csv.h \
 trainer/data/labels.h trainer/base/batch.h trainer/base/classes.h \
 trainer/data/path_check.h trainer/data/set.h trainer/data/list.h \
 trainer/data/split.h
trainer/data/csv.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/path_check.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/split.h:
