# trainer/data.mk - input pipeline sources, linked into chexnet (by
# trainer/module.mk) and into the test runner.
DATA_SRCS := trainer/data_cmds.c trainer/crc32c.c trainer/data_labels.c trainer/data_csv.c \
	trainer/data_set.c trainer/data_nih.c trainer/data_generic.c trainer/data_split.c \
	trainer/image_decode.c trainer/image_resize.c trainer/data_shard.c \
	trainer/data_shard_index.c trainer/data_shard_index_read.c trainer/data_path_check.c trainer/data_gzip_end.c \
	trainer/data_order.c trainer/data_source.c \
	trainer/data_loader.c trainer/image_encode.c trainer/data_args.c trainer/data_pack.c \
	trainer/cmd_pack.c trainer/data_synth.c trainer/data_synth_draw.c trainer/cmd_synth.c
DATA_TEST_SRCS := tests/test_data_formats.c tests/test_data_loader.c tests/test_data_pack.c
DATA_CFLAGS = $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) $(ZLIB_CFLAGS)
DATA_LDLIBS = $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS)

# The test runner links the pipeline directly (tests/test_data_*.c).
TEST_SRCS += $(DATA_SRCS) $(DATA_TEST_SRCS)
TEST_LDLIBS += $(DATA_LDLIBS)

# chexnet-data: the pipeline's commands alone, for tests and bench/loader.
DATA_OBJS = $(patsubst %.c,$(B)/obj/%.o,$(DATA_SRCS))
TEST_PROGRAMS += $(B)/chexnet-data
$(B)/chexnet-data: $(B)/obj/tests/test_data_tool.o $(DATA_OBJS)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DATA_LDLIBS) -lm

# bench-loader: bench/loader (a bench, not a test; built with the tests).
TEST_PROGRAMS += $(B)/bench-loader
$(B)/obj/bench/loader/%.o: MODULE_CFLAGS = -Itrainer
$(B)/bench-loader: $(B)/obj/bench/loader/loader_bench.o $(DATA_OBJS)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DATA_LDLIBS) -lm
