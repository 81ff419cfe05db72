build-m/obj/tests/test_stop_anywhere.o: tests/test_stop_anywhere.c \
 tests/runner.h
tests/runner.h:
