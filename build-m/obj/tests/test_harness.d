build-m/obj/tests/test_harness.o: tests/test_harness.c tests/runner.h
tests/runner.h:
