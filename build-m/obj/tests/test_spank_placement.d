build-m/obj/tests/test_spank_placement.o: tests/test_spank_placement.c \
 tests/runner.h spank/placement.h spank/options.h spank/topology.h \
 spank/placement.h
tests/runner.h:
spank/placement.h:
spank/options.h:
spank/topology.h:
spank/placement.h:
