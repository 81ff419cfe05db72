build-m/obj/tests/test_gpu_emulated.o: tests/test_gpu_emulated.c \
 tests/runner.h
tests/runner.h:
