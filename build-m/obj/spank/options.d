build-m/obj/spank/options.o: spank/options.c spank/options.h
spank/options.h:
