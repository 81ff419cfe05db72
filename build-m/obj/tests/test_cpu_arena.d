build-m/obj/tests/test_cpu_arena.o: tests/test_cpu_arena.c tests/runner.h \
 trainer/backend/cpu/cpu_arena.h
tests/runner.h:
trainer/backend/cpu/cpu_arena.h:
