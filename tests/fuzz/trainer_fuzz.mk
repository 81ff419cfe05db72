# tests/fuzz/trainer_fuzz.mk - libFuzzer targets of the trainer's readers
# of untrusted files (tests/fuzz/fuzz_*.c): each links the trainer sources
# it exercises again, compiled by clang with libFuzzer, ASan and UBSan.
# tests/test_fuzz_files.c runs each for FUZZ_S seconds (default 5).
ifeq ($(HAVE_FUZZER),1)
FUZZ_TRAINER_CFLAGS := -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -Itrainer -Itests/fuzz
FUZZ_COMMON := tests/fuzz/fuzz_files.c
FUZZ_HEADERS := $(wildcard trainer/*/*.h trainer/data/*/*.h trainer/backend/gpu/*.h tests/fuzz/*.h)
FUZZ_CSV := trainer/data/sets/csv.c trainer/data/sets/gzip_end.c
FUZZ_IMAGE_SRCS := tests/fuzz/fuzz_image.c trainer/data/codec/image_decode.c trainer/data/image/image.c trainer/data/image/image_window.c trainer/data/image/image_resize.c \
	trainer/data/codec/image_encode.c trainer/base/whole_file.c trainer/base/fence.c trainer/base/fence_writes.c trainer/data/dicom/dicom_pixels.c
# DICOM's own parsers of untrusted bytes (deflate, code stream headers) and the budget, in
# every build; fuzz_dicom.c calls the first two in process.
FUZZ_DICOM_PURE := trainer/data/dicom/dicom_inflate.c trainer/data/dicom/dicom_codestream.c \
	trainer/data/dicom/dicom_budget.c
# DICOM's reader: the GDCM shim built by clang++ with ASan (UBSan's C++
# runtime is not linked by the C link; GDCM itself is the system's, not
# instrumented) and the reader process around it, or the refusing stub.
ifeq ($(HAVE_GDCM),1)
FUZZ_DICOM_OBJ := $(B)/fuzz-obj/dicom_gdcm.o trainer/data/dicom/dicom_reader.c $(FUZZ_DICOM_PURE)
FUZZ_DICOM_LIBS = $(GDCM_LIBS) -lstdc++
$(B)/fuzz-obj/dicom_gdcm.o: trainer/data/dicom/dicom_gdcm.cc $(wildcard trainer/data/dicom/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC)++ -std=c++17 -O1 -g -fsanitize=fuzzer-no-link,address -Itrainer $(GDCM_CFLAGS) -c $< -o $@
else
FUZZ_DICOM_OBJ := trainer/data/dicom/dicom_none.c $(FUZZ_DICOM_PURE)
endif
FUZZ_TABLES_SRCS := tests/fuzz/fuzz_tables.c $(FUZZ_CSV) trainer/data/sets/nih.c trainer/data/sets/generic.c \
	trainer/data/sets/set.c trainer/data/sets/layout.c trainer/data/sets/list.c trainer/data/sets/split.c trainer/data/sets/split_key.c trainer/data/sets/labels.c trainer/data/sets/path_check.c \
	trainer/data/pack/shard.c trainer/base/crc32c.c trainer/base/classes.c trainer/data/sets/patient.c trainer/data/sets/view.c \
	trainer/base/siphash.c trainer/base/whole_file.c trainer/base/fence.c trainer/base/fence_writes.c trainer/data/dicom/dicom_pixels.c trainer/data/codec/image_decode.c \
	trainer/data/image/image.c trainer/data/image/image_window.c trainer/data/image/image_resize.c
FUZZ_PACK_SRCS := tests/fuzz/fuzz_pack.c $(FUZZ_CSV) trainer/data/pack/shard.c trainer/data/pack/shard_index.c trainer/base/whole_file.c trainer/base/fence.c trainer/base/fence_writes.c \
	trainer/data/pack/shard_index_read.c trainer/base/crc32c.c trainer/data/image/image_resize.c
FUZZ_DICOM_SRCS := tests/fuzz/fuzz_dicom.c trainer/data/dicom/dicom_pixels.c trainer/data/codec/image_decode.c \
	trainer/data/image/image.c trainer/data/image/image_window.c trainer/data/image/image_resize.c
FUZZ_ST_SRCS := tests/fuzz/fuzz_safetensors.c trainer/train/safetensors.c trainer/base/text_control.c trainer/train/checkpoint.c \
	trainer/base/regular_file.c trainer/base/fence.c trainer/base/fence_writes.c \
	trainer/train/checkpoint_replace.c trainer/train/optim.c trainer/train/schedule.c trainer/base/error.c \
	trainer/train/checkpoint_settings.c trainer/train/run_settings.c trainer/train/settings.c \
	trainer/base/option_table.c \
	trainer/base/args.c \
	trainer/model/desc.c
FUZZ_RECORDS_SRCS := tests/fuzz/fuzz_records.c trainer/train/run_record.c trainer/train/run_settings.c \
	trainer/train/settings.c trainer/base/option_table.c trainer/train/optim.c trainer/base/args.c \
	trainer/train/metrics_csv.c trainer/train/tb_events.c trainer/base/crc32c.c trainer/base/classes.c \
	trainer/base/text_control.c trainer/base/regular_file.c trainer/base/whole_file.c trainer/base/fence.c trainer/base/fence_writes.c \
	trainer/base/error.c trainer/recover/survivors.c trainer/recover/writer_beat.c trainer/base/clock.c
FUZZ_ALGO_SRCS := tests/fuzz/fuzz_algo_cache.c trainer/backend/gpu/gpu_algo_file.c \
	trainer/backend/gpu/gpu_algo_cache.c trainer/base/regular_file.c trainer/base/whole_file.c \
	trainer/base/fence.c trainer/base/fence_writes.c

$(B)/fuzz-image: $(FUZZ_IMAGE_SRCS) $(FUZZ_COMMON) $(FUZZ_DICOM_OBJ) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) -o $@ \
		$(FUZZ_IMAGE_SRCS) $(FUZZ_COMMON) $(FUZZ_DICOM_OBJ) $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS) \
		$(FUZZ_DICOM_LIBS) -lm
$(B)/fuzz-tables: $(FUZZ_TABLES_SRCS) $(FUZZ_COMMON) $(FUZZ_DICOM_OBJ) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) -o $@ $(FUZZ_TABLES_SRCS) \
		$(FUZZ_COMMON) $(FUZZ_DICOM_OBJ) $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS) $(FUZZ_DICOM_LIBS) -lm
$(B)/fuzz-pack: $(FUZZ_PACK_SRCS) $(FUZZ_COMMON) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) -o $@ $(FUZZ_PACK_SRCS) $(FUZZ_COMMON) $(ZLIB_LIBS) -lm
$(B)/fuzz-safetensors: $(FUZZ_ST_SRCS) $(FUZZ_COMMON) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) -o $@ $(FUZZ_ST_SRCS) $(FUZZ_COMMON) $(CJSON_LIBS) -lm
$(B)/fuzz-dicom: $(FUZZ_DICOM_SRCS) $(FUZZ_COMMON) $(FUZZ_DICOM_OBJ) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) $(SPNG_CFLAGS) $(TURBOJPEG_CFLAGS) -o $@ $(FUZZ_DICOM_SRCS) \
		$(FUZZ_COMMON) $(FUZZ_DICOM_OBJ) $(SPNG_LIBS) $(TURBOJPEG_LIBS) $(ZLIB_LIBS) $(FUZZ_DICOM_LIBS) -lm
$(B)/fuzz-records: $(FUZZ_RECORDS_SRCS) $(FUZZ_COMMON) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) -o $@ $(FUZZ_RECORDS_SRCS) $(FUZZ_COMMON) $(CJSON_LIBS) -lm -pthread
$(B)/fuzz-algo-cache: $(FUZZ_ALGO_SRCS) $(FUZZ_COMMON) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) -o $@ $(FUZZ_ALGO_SRCS) $(FUZZ_COMMON) -lm
TEST_PROGRAMS += $(B)/fuzz-image $(B)/fuzz-tables $(B)/fuzz-pack $(B)/fuzz-safetensors \
	$(B)/fuzz-records $(B)/fuzz-dicom $(B)/fuzz-algo-cache
# The recipe reader: where the build has it (trainer/module.mk's RECIPE).
ifeq ($(RECIPE),1)
FUZZ_RECIPE_SRCS := tests/fuzz/fuzz_recipe.c trainer/cmd/recipe_read.c trainer/base/yaml_map.c \
	trainer/train/run_record.c trainer/train/run_settings.c trainer/train/settings.c \
	trainer/base/option_table.c trainer/train/optim.c trainer/base/args.c trainer/base/text_control.c \
	trainer/base/regular_file.c trainer/base/whole_file.c trainer/base/fence.c \
	trainer/base/fence_writes.c trainer/base/error.c
$(B)/fuzz-recipe: $(FUZZ_RECIPE_SRCS) $(FUZZ_COMMON) $(FUZZ_HEADERS)
	$(FUZZ_CC) $(FUZZ_TRAINER_CFLAGS) $(YAML_CFLAGS) $(NETTLE_CFLAGS) -o $@ $(FUZZ_RECIPE_SRCS) \
		$(FUZZ_COMMON) $(YAML_LIBS) $(NETTLE_LIBS) $(CJSON_LIBS) -lm -pthread
TEST_PROGRAMS += $(B)/fuzz-recipe
endif
endif
