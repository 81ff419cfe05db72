build-m/obj/trainer/train/verdict.o: trainer/train/verdict.c \
 trainer/train/verdict.h
trainer/train/verdict.h:
