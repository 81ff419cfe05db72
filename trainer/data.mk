# trainer/data.mk - input pipeline sources, linked into chexnet (by
# trainer/module.mk) and into the test runner.
# trainer/data/ by layer, each folder using only the ones above it:
# image (pixels) <- dicom <- codec (files) <- sets <- synth, pack <- load.
DATA_SRCS := trainer/base/error.c trainer/base/option_table.c trainer/base/crc32c.c trainer/base/classes.c trainer/base/clock.c \
	trainer/base/args.c trainer/base/siphash.c trainer/base/whole_file.c trainer/base/fence.c trainer/base/fence_writes.c \
	trainer/base/own_dir.c \
	trainer/data/image/image.c trainer/data/image/image_window.c trainer/data/image/image_resize.c \
	trainer/data/dicom/dicom_pixels.c trainer/data/dicom/dicom_budget.c \
	trainer/data/codec/image_decode.c trainer/data/codec/image_encode.c \
	trainer/data/sets/labels.c trainer/data/sets/csv.c trainer/data/sets/gzip_end.c \
	trainer/data/sets/list.c trainer/data/sets/set.c trainer/data/sets/layout.c trainer/data/sets/nih.c \
	trainer/data/sets/generic.c trainer/data/sets/split.c trainer/data/sets/split_key.c trainer/data/sets/path_check.c \
	trainer/data/sets/patient.c trainer/data/sets/view.c trainer/data/sets/fingerprint.c \
	trainer/data/synth/synth.c trainer/data/synth/synth_draw.c \
	trainer/data/pack/pack.c trainer/data/pack/shard.c trainer/data/pack/shard_index.c \
	trainer/data/pack/shard_index_read.c trainer/data/pack/preview.c \
	trainer/data/load/order.c trainer/data/load/source.c trainer/data/load/loader.c \
	trainer/cmd/data_cmds.c trainer/cmd/pack.c trainer/cmd/synth.c
DATA_TEST_SRCS := tests/test_data_formats.c tests/test_data_loader.c tests/test_data_pack.c tests/test_dicom.c \
	tests/test_dicom_budget.c
DATA_CFLAGS = $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) $(ZLIB_CFLAGS)
DATA_LDLIBS = $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS)

# DICOM: the pixel pipeline always (above); the reader through GDCM (C++ shim) when found,
# else dicom_none.c, which refuses DICOM naming WITH_GDCM.
ifeq ($(HAVE_GDCM),1)
DATA_CXX_OBJS := $(B)/obj/trainer/data/dicom/dicom_gdcm.o
DATA_SRCS += trainer/data/dicom/dicom_reader.c trainer/data/dicom/dicom_inflate.c \
	trainer/data/dicom/dicom_codestream.c
DATA_LDLIBS += $(GDCM_LIBS) -lstdc++
$(B)/obj/trainer/data/dicom/dicom_gdcm.o: MODULE_CXXFLAGS = -Itrainer $(GDCM_CFLAGS)
else
DATA_CXX_OBJS :=
DATA_SRCS += trainer/data/dicom/dicom_none.c
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
