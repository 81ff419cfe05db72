build-m/obj/tests/test_multinode_harness.o: \
 tests/test_multinode_harness.c tests/runner.h
tests/runner.h:
