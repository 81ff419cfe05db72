build-m/obj/bench/loader/loader_bench.o: bench/loader/loader_bench.c \
 trainer/data/loader.h trainer/base/batch.h
trainer/data/loader.h:
trainer/base/batch.h:
