build-m/obj/tests/runner.o: tests/runner.c tests/runner.h tests/groups.h
tests/runner.h:
tests/groups.h:
