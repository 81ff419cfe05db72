build-m/obj/trainer/data/shard_index_read.o: \
 trainer/data/shard_index_read.c trainer/data/csv.h \
 trainer/data/shard_index_read.h trainer/data/shard.h
trainer/data/csv.h:
trainer/data/shard_index_read.h:
trainer/data/shard.h:
