build-m/obj/tests/test_fuzz_files.o: tests/test_fuzz_files.c \
 tests/runner.h
tests/runner.h:
