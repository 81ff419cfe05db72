build-m/obj/trainer/cmd/pack.o: trainer/cmd/pack.c trainer/base/args.h \
 trainer/data/pack.h trainer/data/shard.h
trainer/base/args.h:
trainer/data/pack.h:
trainer/data/shard.h:
