build-m/obj/tests/test_data_loader.o: tests/test_data_loader.c \
 trainer/base/crc32c.h trainer/data/loader.h trainer/base/batch.h \
 trainer/data/order.h trainer/data/pack.h trainer/data/set.h \
 trainer/data/list.h trainer/data/shard.h trainer/data/synth.h \
 trainer/data/image_decode.h trainer/data/image_resize.h tests/runner.h
trainer/base/crc32c.h:
trainer/data/loader.h:
trainer/base/batch.h:
trainer/data/order.h:
trainer/data/pack.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/shard.h:
trainer/data/synth.h:
trainer/data/image_decode.h:
trainer/data/image_resize.h:
tests/runner.h:
