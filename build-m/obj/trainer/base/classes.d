build-m/obj/trainer/base/classes.o: trainer/base/classes.c \
 trainer/base/classes.h trainer/base/batch.h
trainer/base/classes.h:
trainer/base/batch.h:
