build-m/obj/spank-so/task.o: spank/task.c spank/placement.h \
 spank/options.h spank/task.h spank/topology.h
spank/placement.h:
spank/options.h:
spank/task.h:
spank/topology.h:
