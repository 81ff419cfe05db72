build-m/obj/trainer/data/split.o: trainer/data/split.c \
 trainer/data/split.h trainer/data/set.h trainer/data/list.h
trainer/data/split.h:
trainer/data/set.h:
trainer/data/list.h:
