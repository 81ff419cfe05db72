build-m/obj/trainer/model/loss.o: trainer/model/loss.c \
 trainer/model/loss.h
trainer/model/loss.h:
