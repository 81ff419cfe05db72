build-m/obj/trainer/data/shard_index.o: trainer/data/shard_index.c \
 trainer/data/shard.h trainer/data/shard_index_read.h trainer/data/csv.h
trainer/data/shard.h:
trainer/data/shard_index_read.h:
trainer/data/csv.h:
