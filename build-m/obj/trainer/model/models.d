build-m/obj/trainer/model/models.o: trainer/model/models.c \
 trainer/model/model.h trainer/base/error.h
trainer/model/model.h:
trainer/base/error.h:
