build-m/obj/tests/test_multinode_runtime.o: \
 tests/test_multinode_runtime.c tests/runner.h
tests/runner.h:
