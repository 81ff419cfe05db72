build-m/obj/trainer/cmd/train_health.o: trainer/cmd/train_health.c \
 trainer/cmd/train_health.h trainer/backend/gpu/gpu_health.h \
 trainer/base/error.h
trainer/cmd/train_health.h:
trainer/backend/gpu/gpu_health.h:
trainer/base/error.h:
