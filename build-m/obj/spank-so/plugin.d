build-m/obj/spank-so/plugin.o: spank/plugin.c spank/options.h \
 spank/task.h spank/placement.h
spank/options.h:
spank/task.h:
spank/placement.h:
