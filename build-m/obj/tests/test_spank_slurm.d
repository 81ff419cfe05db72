build-m/obj/tests/test_spank_slurm.o: tests/test_spank_slurm.c \
 tests/runner.h
tests/runner.h:
