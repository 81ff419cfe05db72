build-m/obj/trainer/model/input_norm.o: trainer/model/input_norm.c \
 trainer/model/input_norm.h trainer/base/batch.h
trainer/model/input_norm.h:
trainer/base/batch.h:
