build-m/obj/trainer/data/csv.o: trainer/data/csv.c trainer/data/csv.h \
 trainer/data/gzip_end.h
trainer/data/csv.h:
trainer/data/gzip_end.h:
