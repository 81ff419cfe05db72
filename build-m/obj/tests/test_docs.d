build-m/obj/tests/test_docs.o: tests/test_docs.c tests/doc_refs.h \
 tests/runner.h
tests/doc_refs.h:
tests/runner.h:
