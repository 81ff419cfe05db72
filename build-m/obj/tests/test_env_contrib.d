build-m/obj/tests/test_env_contrib.o: tests/test_env_contrib.c \
 runtime/bootstrap_env.h tests/env_launch.h tests/runner.h \
 runtime/settings.h
runtime/bootstrap_env.h:
tests/env_launch.h:
tests/runner.h:
runtime/settings.h:
