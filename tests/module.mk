# tests/module.mk - the test runner (one main) and every test file.
# Modules add their test sources to TEST_SRCS and what they link to
# TEST_LIBS / TEST_LDLIBS.

TEST_SRCS += tests/runner.c tests/run_times.c tests/test_runner.c tests/test_build.c tests/test_harness.c \
	tests/test_multinode_harness.c tests/test_gpu_audit.c tests/gpu_audit.c \
	tests/gpu_audit_policy.c tests/test_diverge.c tests/test_survivors.c \
	tests/test_stop_anywhere.c tests/test_checkpoint_nfs.c \
	tests/test_malformed.c tests/test_layout.c tests/layout_check.c tests/symbol_cycles.c tests/code_lines.c tests/message_audit.c \
	tests/test_docs.c tests/doc_refs.c tests/test_malformed_data.c tests/test_fuzz_files.c \
	tests/test_stop_wait.c tests/test_run_record.c tests/test_settings.c tests/test_out_hostile.c tests/test_metrics.c \
	tests/test_install.c tests/test_install_slurm.c tests/test_cgroup_slurm.c tests/test_packages.c \
	tests/test_packages_slurm.c tests/test_gpu_tools.c
TEST_OBJS = $(patsubst %.c,$(B)/obj/%.o,$(TEST_SRCS))

$(B)/obj/tests/%.o: MODULE_CFLAGS = -Itests -Ispank -Iruntime -Itrainer $(TEST_CFLAGS)

$(B)/hvdtest: $(TEST_OBJS) $(TEST_LIBS)
	$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(TEST_LIBS) $(TEST_LDLIBS) -lm
include tests/fuzz/trainer_fuzz.mk
