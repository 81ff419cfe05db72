# trainer/data.mk - input pipeline sources, linked into chexnet (by
# trainer/module.mk) and into the test runner.
DATA_SRCS := trainer/cmd/data_cmds.c trainer/base/crc32c.c trainer/base/classes.c trainer/base/clock.c trainer/data/labels.c trainer/data/csv.c \
	trainer/data/set.c trainer/data/list.c trainer/data/nih.c trainer/data/generic.c trainer/data/split.c \
	trainer/data/image_decode.c trainer/data/image_window.c trainer/data/image_resize.c trainer/data/shard.c \
	trainer/data/shard_index.c trainer/data/shard_index_read.c \
	trainer/data/path_check.c trainer/data/gzip_end.c trainer/data/order.c trainer/data/source.c \
	trainer/data/loader.c trainer/data/image_encode.c trainer/base/args.c trainer/data/pack.c \
	trainer/cmd/pack.c trainer/data/synth.c trainer/data/synth_draw.c trainer/cmd/synth.c \
	trainer/data/fingerprint.c
DATA_TEST_SRCS := tests/test_data_formats.c tests/test_data_loader.c tests/test_data_pack.c tests/test_dicom.c
DATA_CFLAGS = $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) $(ZLIB_CFLAGS)
DATA_LDLIBS = $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS)

# DICOM: the pipeline always; the reader through GDCM (C++ shim) when found,
# else dicom_none.c, which refuses DICOM naming WITH_GDCM.
DATA_SRCS += trainer/data/dicom_pixels.c trainer/data/patient.c trainer/base/siphash.c trainer/data/view.c trainer/data/preview.c
ifeq ($(HAVE_GDCM),1)
DATA_CXX_OBJS := $(B)/obj/trainer/data/dicom_gdcm.o
DATA_SRCS += trainer/data/dicom_reader.c
DATA_LDLIBS += $(GDCM_LIBS) -lstdc++
$(B)/obj/trainer/data/dicom_gdcm.o: MODULE_CXXFLAGS = -Itrainer $(GDCM_CFLAGS)
else
DATA_CXX_OBJS :=
DATA_SRCS += trainer/data/dicom_none.c
endif

# The test runner links the pipeline directly (tests/test_data_*.c).
TEST_SRCS += $(DATA_SRCS) $(DATA_TEST_SRCS)
TEST_LDLIBS += $(DATA_LDLIBS)

# chexnet-data: the pipeline's commands alone, for tests and bench/loader.
DATA_OBJS = $(patsubst %.c,$(B)/obj/%.o,$(DATA_SRCS)) $(DATA_CXX_OBJS)
TEST_PROGRAMS += $(B)/chexnet-data
$(B)/chexnet-data: $(B)/obj/tests/test_data_tool.o $(DATA_OBJS)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DATA_LDLIBS) -lm

# bench-loader: bench/loader (a bench, not a test; built with the tests).
TEST_PROGRAMS += $(B)/bench-loader
$(B)/obj/bench/loader/%.o: MODULE_CFLAGS = -Itrainer
$(B)/bench-loader: $(B)/obj/bench/loader/loader_bench.o $(DATA_OBJS)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DATA_LDLIBS) -lm
