build-m/obj/tests/test_runner.o: tests/test_runner.c tests/runner.h
tests/runner.h:
