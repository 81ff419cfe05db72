build-m/obj/tests/test_checkpoint_nfs.o: tests/test_checkpoint_nfs.c \
 tests/runner.h
tests/runner.h:
