build-m/obj/tests/test_gpu_audit.o: tests/test_gpu_audit.c \
 tests/gpu_audit.h tests/runner.h
tests/gpu_audit.h:
tests/runner.h:
