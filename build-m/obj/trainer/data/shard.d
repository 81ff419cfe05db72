build-m/obj/trainer/data/shard.o: trainer/data/shard.c \
 trainer/base/crc32c.h trainer/data/shard.h
trainer/base/crc32c.h:
trainer/data/shard.h:
