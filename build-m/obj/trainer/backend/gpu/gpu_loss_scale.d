build-m/obj/trainer/backend/gpu/gpu_loss_scale.o: \
 trainer/backend/gpu/gpu_loss_scale.c \
 trainer/backend/gpu/gpu_loss_scale.h trainer/base/error.h
trainer/backend/gpu/gpu_loss_scale.h:
trainer/base/error.h:
