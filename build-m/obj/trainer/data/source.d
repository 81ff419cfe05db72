build-m/obj/trainer/data/source.o: trainer/data/source.c \
 trainer/data/loader.h trainer/base/batch.h trainer/data/source.h \
 trainer/data/set.h trainer/data/list.h trainer/data/shard.h \
 trainer/data/image_decode.h
trainer/data/loader.h:
trainer/base/batch.h:
trainer/data/source.h:
trainer/data/set.h:
trainer/data/list.h:
trainer/data/shard.h:
trainer/data/image_decode.h:
