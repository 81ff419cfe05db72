build-m/obj/trainer/data/gzip_end.o: trainer/data/gzip_end.c \
 trainer/data/gzip_end.h
trainer/data/gzip_end.h:
