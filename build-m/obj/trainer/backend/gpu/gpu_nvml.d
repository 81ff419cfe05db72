build-m/obj/trainer/backend/gpu/gpu_nvml.o: \
 trainer/backend/gpu/gpu_nvml.c trainer/backend/gpu/gpu_health.h \
 trainer/base/error.h
trainer/backend/gpu/gpu_health.h:
trainer/base/error.h:
