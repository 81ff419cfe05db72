build-m/obj/tests/test_malformed_data.o: tests/test_malformed_data.c \
 tests/runner.h trainer/data/set.h trainer/data/list.h \
 trainer/data/shard.h trainer/data/image_decode.h \
 trainer/data/image_encode.h
tests/runner.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/shard.h:
trainer/data/image_decode.h:
trainer/data/image_encode.h:
