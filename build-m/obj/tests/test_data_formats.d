build-m/obj/tests/test_data_formats.o: tests/test_data_formats.c \
 trainer/base/crc32c.h trainer/data/csv.h trainer/data/labels.h \
 trainer/base/batch.h trainer/base/classes.h trainer/data/set.h \
 trainer/data/list.h trainer/data/shard.h trainer/data/split.h \
 trainer/data/synth.h trainer/data/image_decode.h \
 trainer/data/image_encode.h trainer/data/image_resize.h tests/runner.h
trainer/base/crc32c.h:
trainer/data/csv.h:
trainer/data/labels.h:
trainer/base/batch.h:
trainer/base/classes.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/shard.h:
trainer/data/split.h:
trainer/data/synth.h:
trainer/data/image_decode.h:
trainer/data/image_encode.h:
trainer/data/image_resize.h:
tests/runner.h:
