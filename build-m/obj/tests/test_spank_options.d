build-m/obj/tests/test_spank_options.o: tests/test_spank_options.c \
 tests/runner.h spank/options.h
tests/runner.h:
spank/options.h:
