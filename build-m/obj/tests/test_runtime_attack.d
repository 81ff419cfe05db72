build-m/obj/tests/test_runtime_attack.o: tests/test_runtime_attack.c \
 tests/runner.h
tests/runner.h:
