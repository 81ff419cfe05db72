build-m/obj/trainer/data/pack.o: trainer/data/pack.c trainer/base/clock.h \
 trainer/base/crc32c.h trainer/base/args.h trainer/data/pack.h \
 trainer/data/set.h trainer/data/list.h trainer/data/shard.h \
 trainer/data/image_decode.h
trainer/base/clock.h:
trainer/base/crc32c.h:
trainer/base/args.h:
trainer/data/pack.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/shard.h:
trainer/data/image_decode.h:
