build-m/obj/trainer/data/set.o: trainer/data/set.c trainer/data/set.h \
 trainer/data/list.h
trainer/data/set.h:
trainer/data/list.h:
