build-m/obj/tests/doc_refs.o: tests/doc_refs.c tests/doc_refs.h \
 tests/runner.h
tests/doc_refs.h:
tests/runner.h:
