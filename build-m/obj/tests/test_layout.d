build-m/obj/tests/test_layout.o: tests/test_layout.c tests/layout_check.h \
 tests/runner.h
tests/layout_check.h:
tests/runner.h:
