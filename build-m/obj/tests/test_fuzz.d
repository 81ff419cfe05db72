build-m/obj/tests/test_fuzz.o: tests/test_fuzz.c tests/runner.h
tests/runner.h:
