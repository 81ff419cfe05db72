build-m/obj/trainer/data/path_check.o: trainer/data/path_check.c \
 trainer/data/path_check.h
trainer/data/path_check.h:
