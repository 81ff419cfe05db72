build-m/obj/tests/gpu_audit.o: tests/gpu_audit.c tests/gpu_audit.h
tests/gpu_audit.h:
