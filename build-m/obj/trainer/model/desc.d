build-m/obj/trainer/model/desc.o: trainer/model/desc.c \
 trainer/model/model.h trainer/base/error.h
trainer/model/model.h:
trainer/base/error.h:
