build-m/obj/trainer/model/params.o: trainer/model/params.c \
 trainer/model/model.h trainer/base/error.h trainer/base/rng.h
trainer/model/model.h:
trainer/base/error.h:
trainer/base/rng.h:
