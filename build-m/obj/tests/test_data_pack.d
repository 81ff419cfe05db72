build-m/obj/tests/test_data_pack.o: tests/test_data_pack.c \
 trainer/data/shard.h tests/runner.h
trainer/data/shard.h:
tests/runner.h:
