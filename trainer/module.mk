# trainer/module.mk - ./chexnet: models, backends, training, checkpoints,
# CLI. The input pipeline's sources come from trainer/data.mk
# ($(DATA_SRCS)); the oneDNN backend's from trainer/cpu/cpu.mk
# ($(CPU_BACKEND_SRCS), owned by the cpu backend work) when HAVE_DNNL.

TRAINER_CORE_SRCS := trainer/error.c trainer/input_norm.c trainer/backend.c \
	trainer/model_desc.c trainer/model_densenet.c trainer/model_resnet.c \
	trainer/models.c trainer/params.c trainer/rng.c trainer/loss.c trainer/host_loss.c \
	trainer/optim.c trainer/schedule.c trainer/auroc.c trainer/safetensors.c trainer/text_control.c \
	trainer/checkpoint.c trainer/checkpoint_replace.c trainer/progress.c trainer/cli.c trainer/run_common.c \
	trainer/run_train.c trainer/run_train_report.c trainer/run_eval.c trainer/run_bench.c \
	trainer/run_train_gpu.c trainer/run_train_health.c trainer/run_train_verdict.c trainer/run_train_diverge.c \
	trainer/dist.c trainer/grad_sync.c trainer/stop_signal.c trainer/span.c
REF_BACKEND_SRCS := trainer/ref/ref_backend.c trainer/ref/ref_conv.c \
	trainer/ref/ref_batchnorm.c trainer/ref/ref_relu.c trainer/ref/ref_maxpool.c \
	trainer/ref/ref_avgpool.c trainer/ref/ref_linear.c trainer/ref/ref_add.c

ifeq ($(HAVE_DNNL),1)
-include trainer/cpu/cpu.mk
endif
CPU_BACKEND_SRCS ?=

# --- GPU backend: trainer/gpu/gpu.mk (owned by the gpu backend work). Its
# pure parts build everywhere; the CUDA parts only when HAVE_CUDA,
# HAVE_CUDNN and HAVE_CUBLAS are 1 (guarded inside gpu.mk). ---
-include trainer/gpu/gpu.mk

TRAINER_LIB_SRCS := $(TRAINER_CORE_SRCS) $(REF_BACKEND_SRCS) $(DATA_SRCS) $(CPU_BACKEND_SRCS) \
	$(GPU_BACKEND_SRCS)
TRAINER_LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(TRAINER_LIB_SRCS)) $(GPU_BACKEND_CU_OBJS)
TRAINER_LDLIBS = $(DATA_LDLIBS) $(CJSON_LIBS) $(if $(CPU_BACKEND_SRCS),$(DNNL_LIBS)) \
	$(GPU_BACKEND_LDLIBS) -lm

$(B)/obj/trainer/%.o: MODULE_CFLAGS = -Itrainer $(DATA_CFLAGS) $(CJSON_CFLAGS)
$(B)/obj/trainer/ref/%.o: MODULE_CFLAGS = -Itrainer -Itrainer/ref
ifneq ($(strip $(CPU_BACKEND_SRCS)),)
$(B)/obj/trainer/cpu/%.o: MODULE_CFLAGS = -Itrainer $(DNNL_CFLAGS)
$(B)/obj/trainer/backend.o: MODULE_CFLAGS = -Itrainer -DHAVE_CPU_BACKEND
endif

# --- The data-parallel runtime (libhvd, runtime/module.mk, needs PMIx):
# dist.c is the one file that wraps it; without it chexnet is one rank. ---
ifeq ($(HAVE_PMIX),1)
$(B)/obj/trainer/dist.o: MODULE_CFLAGS = -Itrainer -Iruntime -DHAVE_HVD_RUNTIME
CHEXNET_HVD_LIB := $(B)/libhvd.a
CHEXNET_HVD_LDLIBS = $(RUNTIME_LDLIBS)
endif

$(B)/libchexnet.a: $(TRAINER_LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/chexnet: $(B)/obj/trainer/main.o $(B)/libchexnet.a $(CHEXNET_HVD_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(TRAINER_LDLIBS) $(CHEXNET_HVD_LDLIBS)

PROGRAMS += $(B)/chexnet
LIBS_STATIC += $(B)/libchexnet.a
TEST_LIBS += $(B)/libchexnet.a
TEST_LDLIBS += $(TRAINER_LDLIBS) $(CHEXNET_HVD_LIB) $(CHEXNET_HVD_LDLIBS)
TEST_SRCS += tests/test_ref_layers.c tests/test_model.c tests/test_backend_loss.c tests/test_span.c tests/test_training.c \
	tests/test_checkpoint.c tests/test_cli.c tests/test_e2e_slurm.c tests/ckpt_compare.c tests/layer_cases.c \
	tests/test_train_dist.c
