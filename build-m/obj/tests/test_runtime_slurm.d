build-m/obj/tests/test_runtime_slurm.o: tests/test_runtime_slurm.c \
 tests/runner.h
tests/runner.h:
