build-m/obj/trainer/backend/gpu/gpu_health.o: \
 trainer/backend/gpu/gpu_health.c trainer/backend/gpu/gpu_health.h \
 trainer/base/error.h
trainer/backend/gpu/gpu_health.h:
trainer/base/error.h:
