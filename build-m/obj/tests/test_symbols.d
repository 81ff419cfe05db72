build-m/obj/tests/test_symbols.o: tests/test_symbols.c tests/runner.h
tests/runner.h:
