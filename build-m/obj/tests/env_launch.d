build-m/obj/tests/env_launch.o: tests/env_launch.c tests/env_launch.h \
 tests/runner.h
tests/env_launch.h:
tests/runner.h:
