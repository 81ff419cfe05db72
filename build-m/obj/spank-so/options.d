build-m/obj/spank-so/options.o: spank/options.c spank/options.h
spank/options.h:
