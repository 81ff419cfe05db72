build-m/obj/tests/test_stop_wait.o: tests/test_stop_wait.c tests/runner.h
tests/runner.h:
