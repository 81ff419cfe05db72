build-m/obj/spank-so/topology.o: spank/topology.c spank/topology.h \
 spank/placement.h spank/options.h
spank/topology.h:
spank/placement.h:
spank/options.h:
