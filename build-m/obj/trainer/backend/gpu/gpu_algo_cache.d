build-m/obj/trainer/backend/gpu/gpu_algo_cache.o: \
 trainer/backend/gpu/gpu_algo_cache.c \
 trainer/backend/gpu/gpu_algo_cache.h
trainer/backend/gpu/gpu_algo_cache.h:
