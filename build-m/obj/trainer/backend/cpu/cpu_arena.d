build-m/obj/trainer/backend/cpu/cpu_arena.o: \
 trainer/backend/cpu/cpu_arena.c trainer/backend/cpu/cpu_arena.h
trainer/backend/cpu/cpu_arena.h:
