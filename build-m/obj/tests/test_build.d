build-m/obj/tests/test_build.o: tests/test_build.c tests/runner.h
tests/runner.h:
