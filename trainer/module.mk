# trainer/module.mk - ./chexnet: models, backends, training, checkpoints,
# CLI. The input pipeline's sources come from trainer/data.mk
# ($(DATA_SRCS)); the oneDNN backend's from trainer/backend/cpu/cpu.mk
# ($(CPU_BACKEND_SRCS), owned by the cpu backend work) when HAVE_DNNL.

TRAINER_CORE_SRCS := trainer/base/rng.c trainer/base/text_control.c \
	trainer/base/regular_file.c \
	trainer/model/input_norm.c trainer/model/desc.c trainer/model/densenet.c trainer/model/resnet.c \
	trainer/model/models.c trainer/model/params.c trainer/model/loss.c \
	trainer/backend/registry.c trainer/backend/choice.c trainer/backend/precision.c trainer/backend/host_loss.c trainer/backend/arena.c \
	trainer/train/optim.c trainer/train/schedule.c trainer/train/safetensors.c \
	trainer/train/checkpoint.c trainer/train/checkpoint_replace.c trainer/train/progress.c \
	trainer/train/verdict.c trainer/train/dist.c trainer/train/grad_sync.c \
	trainer/train/stop_signal.c trainer/train/span.c \
	trainer/train/settings.c trainer/train/run_settings.c trainer/train/run_record.c \
	trainer/train/checkpoint_settings.c \
	trainer/loop/run_dir.c trainer/loop/run_files.c trainer/loop/run_name.c trainer/loop/last_error.c trainer/train/metrics_csv.c trainer/train/tb_events.c trainer/loop/run_metrics.c trainer/recover/survivors.c trainer/recover/writer_beat.c trainer/train/peer_lost.c trainer/recover/rejoin.c \
	trainer/eval/auroc.c \
	trainer/loop/session.c trainer/loop/algo_share.c trainer/loop/evaluate.c trainer/loop/thresholds.c trainer/loop/train.c \
	trainer/loop/train_setup.c trainer/loop/train_save.c trainer/recover/lost_peer.c \
	trainer/loop/train_report.c trainer/loop/train_device.c trainer/loop/train_health.c \
	trainer/loop/diverge.c \
	trainer/cmd/cli.c trainer/cmd/commands.c trainer/cmd/train.c trainer/cmd/go_on.c trainer/cmd/eval.c trainer/cmd/bench.c trainer/cmd/predict.c \
	trainer/cmd/checkpoint_defaults.c trainer/cmd/config.c trainer/cmd/resume_defaults.c trainer/cmd/train_options.c \
	trainer/cmd/config_file.c
# Recipe files (--config): libyaml reads them, nettle hashes them; without
# either, cmd/recipe_none.c refuses --config in one line.
RECIPE := $(if $(filter 11,$(HAVE_YAML)$(HAVE_NETTLE)),1,0)
ifeq ($(RECIPE),1)
TRAINER_CORE_SRCS += trainer/base/yaml_map.c trainer/cmd/recipe_read.c
RECIPE_LIBS = $(YAML_LIBS) $(NETTLE_LIBS)
TEST_CFLAGS += -DHVD_HAVE_RECIPE
TEST_SRCS += tests/test_recipe.c
$(B)/obj/trainer/base/yaml_map.o $(B)/obj/trainer/cmd/recipe_read.o: MODULE_CFLAGS = -Itrainer \
	$(YAML_CFLAGS) $(NETTLE_CFLAGS) $(CJSON_CFLAGS)
else
TRAINER_CORE_SRCS += trainer/cmd/recipe_none.c
endif
REF_BACKEND_SRCS := trainer/backend/ref/backend.c trainer/backend/ref/conv.c \
	trainer/backend/ref/batchnorm.c trainer/backend/ref/relu.c trainer/backend/ref/maxpool.c \
	trainer/backend/ref/avgpool.c trainer/backend/ref/linear.c trainer/backend/ref/add.c

# The backends this build has, for backend/registry.c (cpu.mk, gpu.mk add).
REGISTRY_DEFS :=
ifeq ($(HAVE_DNNL),1)
-include trainer/backend/cpu/cpu.mk
endif
CPU_BACKEND_SRCS ?=

# --- GPU backend: trainer/backend/gpu/gpu.mk (owned by the gpu backend work). Its
# pure parts build everywhere; the CUDA parts only when HAVE_CUDA,
# HAVE_CUDNN and HAVE_CUBLAS are 1 (guarded inside gpu.mk). ---
-include trainer/backend/gpu/gpu.mk

TRAINER_LIB_SRCS := $(TRAINER_CORE_SRCS) $(REF_BACKEND_SRCS) $(DATA_SRCS) $(EVAL_SRCS) $(CPU_BACKEND_SRCS) \
	$(GPU_BACKEND_SRCS)
TRAINER_LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(TRAINER_LIB_SRCS)) $(GPU_BACKEND_CU_OBJS) $(DATA_CXX_OBJS)
TRAINER_LDLIBS = $(DATA_LDLIBS) $(EVAL_LDLIBS) $(CJSON_LIBS) $(RECIPE_LIBS) $(if $(CPU_BACKEND_SRCS),$(DNNL_LIBS)) \
	$(GPU_BACKEND_LDLIBS) -lm

$(B)/obj/trainer/%.o: MODULE_CFLAGS = -Itrainer $(DATA_CFLAGS) $(CJSON_CFLAGS)
$(B)/obj/trainer/backend/ref/%.o: MODULE_CFLAGS = -Itrainer
# The optimizer's loops as vectors (no OpenMP runtime; sqrtf sets no errno),
# each product rounded as written under any -march (no FMA contraction).
$(B)/obj/trainer/train/optim.o: MODULE_CFLAGS = -Itrainer -fopenmp-simd -fno-math-errno -ffp-contract=off
# Module flags, never CFLAGS +=: a CFLAGS on make's command line would
# drop them (-fopenmp, the registry's backends).
ifneq ($(strip $(CPU_BACKEND_SRCS)),)
$(B)/obj/trainer/backend/cpu/%.o: MODULE_CFLAGS = -Itrainer $(CPU_BACKEND_CFLAGS)
endif
$(B)/obj/trainer/backend/registry.o: MODULE_CFLAGS = -Itrainer $(REGISTRY_DEFS)

# --- The data-parallel runtime (libhvd, runtime/module.mk: HAVE_HVD):
# dist.c is the one file that wraps it; without it chexnet is one rank. ---
ifeq ($(HAVE_HVD),1)
$(B)/obj/trainer/train/dist.o: MODULE_CFLAGS = -Itrainer -Iruntime -DHAVE_HVD_RUNTIME
CHEXNET_HVD_LIB := $(B)/libhvd.a
CHEXNET_HVD_LDLIBS = $(RUNTIME_LDLIBS)
endif

# The trainer's objects, one path a line, for the layout group's
# symbol-cycle check (tests/test_layout.c): libchexnet.a's member names
# repeat (data/pack/pack.o, cmd/pack.o), the list keeps their folders.
$(B)/obj/trainer/objects.txt: $(TRAINER_LIB_OBJS) $(B)/obj/trainer/cmd/main.o \
		trainer/module.mk trainer/data.mk trainer/eval.mk $(B)/config.mk
	@mkdir -p $(@D)
	printf '%s\n' $(abspath $(filter %.o,$^)) > $@
TEST_PROGRAMS += $(B)/obj/trainer/objects.txt

$(B)/libchexnet.a: $(TRAINER_LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/obj/trainer/cmd/main.o $(B)/obj/trainer/loop/session.o: VERSION
$(B)/chexnet: $(B)/obj/trainer/cmd/main.o $(B)/libchexnet.a $(CHEXNET_HVD_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(TRAINER_LDLIBS) $(CHEXNET_HVD_LDLIBS)

PROGRAMS += $(B)/chexnet
LIBS_STATIC += $(B)/libchexnet.a

# The settings table with one row more that only tests have
# (-DSETTINGS_TEST_ROW, train/settings.c): the runner and
# $(B)/test-row/chexnet link it before libchexnet.a, in place of its
# settings.o, so that trainer-settings sees a row added reach every place.
TEST_ROW_SETTINGS := $(B)/obj/test-row/trainer/train/settings.o
$(TEST_ROW_SETTINGS): trainer/train/settings.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itrainer -DSETTINGS_TEST_ROW -MMD -MP -c $< -o $@
$(B)/test-row/chexnet: $(B)/obj/trainer/cmd/main.o $(TEST_ROW_SETTINGS) $(B)/libchexnet.a \
		$(CHEXNET_HVD_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(TRAINER_LDLIBS) $(CHEXNET_HVD_LDLIBS)
TEST_PROGRAMS += $(B)/test-row/chexnet
TEST_LIBS += $(TEST_ROW_SETTINGS) $(B)/libchexnet.a
TEST_LDLIBS += $(TRAINER_LDLIBS) $(HVD_INTERNAL_LIB) $(CHEXNET_HVD_LDLIBS)
TEST_SRCS += tests/test_ref_layers.c tests/test_arena.c tests/test_model.c tests/test_backend_loss.c tests/test_span.c tests/test_training.c \
	tests/test_checkpoint.c tests/test_cli.c tests/test_e2e_slurm.c tests/test_sbatch_scripts.c tests/ckpt_compare.c tests/layer_cases.c \
	tests/test_train_dist.c

# install-chexnet: the program and chexnet(1).
INSTALL_RULES += install-chexnet
install-chexnet_FILES := bindir:chexnet mandir:man1/chexnet.1
.PHONY: install-chexnet
install-chexnet: $(B)/chexnet
	$(INSTALL) -d '$(DESTDIR)$(bindir)' '$(DESTDIR)$(mandir)/man1'
	$(INSTALL) -m 0755 $(B)/chexnet '$(DESTDIR)$(bindir)/chexnet'
	$(call install_man,man/chexnet.1,$(mandir)/man1/chexnet.1)
