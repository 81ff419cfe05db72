build-m/obj/trainer/model/densenet.o: trainer/model/densenet.c \
 trainer/model/model.h trainer/base/error.h
trainer/model/model.h:
trainer/base/error.h:
