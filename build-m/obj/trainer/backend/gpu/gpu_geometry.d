build-m/obj/trainer/backend/gpu/gpu_geometry.o: \
 trainer/backend/gpu/gpu_geometry.c trainer/backend/gpu/gpu_geometry.h \
 trainer/base/error.h
trainer/backend/gpu/gpu_geometry.h:
trainer/base/error.h:
