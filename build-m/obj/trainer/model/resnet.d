build-m/obj/trainer/model/resnet.o: trainer/model/resnet.c \
 trainer/model/model.h trainer/base/error.h
trainer/model/model.h:
trainer/base/error.h:
