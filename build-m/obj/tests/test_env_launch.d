build-m/obj/tests/test_env_launch.o: tests/test_env_launch.c \
 runtime/bootstrap_env.h tests/ckpt_compare.h tests/env_launch.h \
 tests/runner.h
runtime/bootstrap_env.h:
tests/ckpt_compare.h:
tests/env_launch.h:
tests/runner.h:
