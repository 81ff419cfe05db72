build-m/obj/trainer/data/list.o: trainer/data/list.c trainer/data/csv.h \
 trainer/data/list.h
trainer/data/csv.h:
trainer/data/list.h:
