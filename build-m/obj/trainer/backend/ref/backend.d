build-m/obj/trainer/backend/ref/backend.o: trainer/backend/ref/backend.c \
 trainer/backend/backend.h trainer/base/batch.h trainer/base/error.h \
 trainer/model/model.h trainer/backend/host_loss.h \
 trainer/model/input_norm.h trainer/backend/ref/layers.h
trainer/backend/backend.h:
trainer/base/batch.h:
trainer/base/error.h:
trainer/model/model.h:
trainer/backend/host_loss.h:
trainer/model/input_norm.h:
trainer/backend/ref/layers.h:
