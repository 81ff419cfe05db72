build-m/obj/trainer/backend/cpu/cpu_isa.o: trainer/backend/cpu/cpu_isa.c \
 trainer/backend/cpu/cpu_isa.h
trainer/backend/cpu/cpu_isa.h:
