build-m/obj/trainer/backend/host_loss.o: trainer/backend/host_loss.c \
 trainer/backend/host_loss.h trainer/base/error.h trainer/model/loss.h
trainer/backend/host_loss.h:
trainer/base/error.h:
trainer/model/loss.h:
