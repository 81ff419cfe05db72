build-m/obj/tests/test_cli.o: tests/test_cli.c tests/runner.h \
 trainer/data/image_encode.h
tests/runner.h:
trainer/data/image_encode.h:
