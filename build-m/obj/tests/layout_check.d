build-m/obj/tests/layout_check.o: tests/layout_check.c \
 tests/layout_check.h
tests/layout_check.h:
