build-m/obj/spank-so/placement.o: spank/placement.c spank/placement.h \
 spank/options.h
spank/placement.h:
spank/options.h:
