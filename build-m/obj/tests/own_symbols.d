build-m/obj/tests/own_symbols.o: tests/own_symbols.c runtime/hvd.h
runtime/hvd.h:
