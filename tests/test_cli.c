/* test_cli.c - ./chexnet from the outside: strict parsing (bad number,
 * unknown flag, unknown command: exit 2 and a one-line message), --help
 * per command, the parameter count line, JSON-lines progress fields,
 * determinism of training on ref, eval and predict on a checkpoint, and
 * the PyTorch cross-check (skipped without python3-torch).
 * What it does not test: the pipeline's own commands (their tests).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/choice.h"
#include "runner.h"
#include "data/codec/image_encode.h"

/* Small and fast on ref: DenseNet-121 at 32 px, batch 2. */
#define ONE "--backend ref --size 32 --seed 7"
#define SMALL ONE " --batch 2 --synthetic-images 6"

static void chexnet(const char *args, struct test_proc *p, int timeout)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/chexnet' %s", test_tmpdir(), test_build_dir(), args);
	CHECK(test_run(cmd, timeout, p) == 0);
}

static void test_bad_number_is_an_error(void)
{
	struct test_proc p;

	chexnet("train --synthetic --batch 12x", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--batch '12x'");
	test_proc_free(&p);
	chexnet("bench --steps -1", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--steps '-1'");
	test_proc_free(&p);
	chexnet("train --synthetic --lr abc", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--lr 'abc'");
	test_proc_free(&p);
	chexnet("train --synthetic --precision fp8", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "fp8");
	test_proc_free(&p);
}

static void test_unknown_flag_and_command_are_errors(void)
{
	struct test_proc p;

	chexnet("train --synthetic --frobnicate 3", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "'--frobnicate': unknown option");
	test_proc_free(&p);
	chexnet("predict --epochs 3 x.png", &p, 10);   /* a train-only flag */
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--epochs");
	test_proc_free(&p);
	chexnet("trian", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "'trian': unknown command");
	test_proc_free(&p);
	chexnet("train --synthetic --batch", &p, 10);
	CHECK_INT(p.exit_code, 2);
	CHECK_CONTAINS(p.err, "--batch: missing value");
	test_proc_free(&p);
	chexnet("train --synthetic --model vgg16 " SMALL, &p, 10);
	CHECK_INT(p.exit_code, 2);   /* before the runtime starts, as every usage error */
	CHECK_CONTAINS(p.err, "--model: 'vgg16'");
	test_proc_free(&p);
}

/* --relaunch takes the run's own command line again: without --out, or
 * with --resume, it is refused before anything starts or is written. */
static void test_relaunch_needs_the_runs_own_command_line(void)
{
	static const char *const lines[] = { "train --synthetic --relaunch " SMALL,
					     "train --synthetic --relaunch --out r --resume r " SMALL };
	struct test_proc p;

	for (int i = 0; i < 2; i++) {
		chexnet(lines[i], &p, 10);
		CHECK_INT(p.exit_code, 2);
		CHECK_STR(p.err, "chexnet: train: --relaunch: needs the run's own command line, with "
			  "--out DIR and without --resume\n");
		test_proc_free(&p);
	}
	char *r = test_path(test_tmpdir(), "r");
	CHECK_MSG(access(r, F_OK) != 0, "%s: made by a refused --relaunch", r);
	free(r);
}

static void test_help_for_each_command(void)
{
	const char *commands[] = { "train", "eval", "predict", "bench" };
	struct test_proc p;
	char args[64], want[64];

	for (int i = 0; i < 4; i++) {
		snprintf(args, sizeof(args), "%s --help", commands[i]);
		chexnet(args, &p, 10);
		CHECK_INT(p.exit_code, 0);
		snprintf(want, sizeof(want), "usage: chexnet %s", commands[i]);
		CHECK_CONTAINS(p.out, want);
		CHECK_CONTAINS(p.out, "--model");
		test_proc_free(&p);
	}
	chexnet("--help", &p, 10);
	CHECK_CONTAINS(p.out, "bench");
	test_proc_free(&p);
}

/* Returns the number of "step"/"epoch" lines; fills losses (up to 16). */
static int parse_progress(const char *out, double *losses)
{
	int steps = 0;
	const char *line = out;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		cJSON *j = cJSON_ParseWithLength(line, len);
		CHECK_MSG(j != NULL, "not JSON: '%.*s'", (int)len, line);
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "event");
		if (cJSON_IsString(ev) && (!strcmp(ev->valuestring, "step") || !strcmp(ev->valuestring, "epoch"))) {
			const char *fields[] = { "epoch", "step", "steps", "loss", "lr", "images_per_s",
						 "data_wait_pct", "eta_s" };
			for (int f = 0; f < 8; f++)
				CHECK_MSG(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, fields[f])),
					  "field %s missing in '%.*s'", fields[f], (int)len, line);
			if (steps < 16)
				losses[steps] = cJSON_GetObjectItemCaseSensitive(j, "loss")->valuedouble;
			steps++;
		}
		cJSON_Delete(j);
		line = end ? end + 1 : NULL;
	}
	return steps;
}

static void test_json_progress_and_determinism(void)
{
	struct test_proc a, b, c;
	double la[16], lb[16], lc[16];

	chexnet("train --synthetic --json --progress-every 1 --epochs 2 " SMALL, &a, 100);
	CHECK_INT(a.exit_code, 0);
	CHECK_CONTAINS(a.err, "densenet121: 6,968,206 parameters");
	CHECK_CONTAINS(a.out, "\"event\":\"validation\"");
	int na = parse_progress(a.out, la);
	CHECK_INT(na, 6);   /* 3 steps per epoch, 2 epochs */
	chexnet("train --synthetic --json --progress-every 1 --epochs 2 " SMALL, &b, 100);
	int nb = parse_progress(b.out, lb);
	CHECK_INT(nb, na);
	for (int i = 0; i < na && i < nb && i < 16; i++)
		CHECK_MSG(la[i] == lb[i], "step %d: loss %.9g vs %.9g with the same seed", i, la[i], lb[i]);
	/* another seed: its first step is enough to differ */
	chexnet("train --synthetic --json --progress-every 1 --steps 1 " SMALL " --seed 8", &c, 100);
	CHECK_INT(parse_progress(c.out, lc), 1);
	CHECK_MSG(lc[0] != la[0], "another seed gives the same loss %.9g", la[0]);
	test_proc_free(&a);
	test_proc_free(&b);
	test_proc_free(&c);
}

static void test_eval_and_predict_on_a_checkpoint(void)
{
	struct test_proc p;
	uint8_t px[32 * 32];
	char err[512], args[1024];

	chexnet("train --synthetic --quiet --out ck " SMALL, &p, 100);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	chexnet("eval --checkpoint ck/last --synthetic " SMALL, &p, 100);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "Pleural_Thickening");
	CHECK_CONTAINS(p.out, "0.8062");
	CHECK_CONTAINS(p.out, "mean");
	test_proc_free(&p);
	for (int i = 0; i < 32 * 32; i++)
		px[i] = (uint8_t)(i * 7);
	char *png = test_path(test_tmpdir(), "x.png");
	CHECK(image_write_png_gray(png, px, 32, 32, err, sizeof(err)) == 0);
	snprintf(args, sizeof(args), "predict --checkpoint ck/last %s x.png", ONE);
	chexnet(args, &p, 60);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.out, "x.png 0.");
	CHECK_CONTAINS(p.out, "Hernia");
	test_proc_free(&p);
	/* the run folder means its best/; options may follow the images */
	chexnet("predict --checkpoint ck x.png " ONE, &p, 60);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	CHECK_CONTAINS(p.err, "chexnet: predict: --checkpoint 'ck' is a run: using 'ck/best' ");
	CHECK_CONTAINS(p.out, "x.png 0.");
	test_proc_free(&p);
	chexnet("eval --checkpoint ck --synthetic " SMALL, &p, 100);
	CHECK_INT(p.exit_code, 0);
	CHECK_CONTAINS(p.err, "chexnet: eval: --checkpoint 'ck' is a run: using 'ck/best' ");
	test_proc_free(&p);
	chexnet("predict --checkpoint ck/last " ONE " missing.png", &p, 60);
	CHECK_INT(p.exit_code, 1);
	CHECK_CONTAINS(p.err, "missing.png");
	test_proc_free(&p);
	chexnet("eval --checkpoint nowhere --synthetic " SMALL, &p, 60);
	CHECK_INT(p.exit_code, 2);   /* before start-up, as every usage error */
	CHECK_CONTAINS(p.err, "nowhere");
	test_proc_free(&p);
	free(png);
}

/* A tiny ref checkpoint in ck/ and `chexnet predict` of a generated 64 x
 * 64 image (x.png, pattern mult) with CHECKPOINT into predicted.txt:
 * 1, or 0 (failed, said) or -1 (skip: /usr/bin/python3 cannot import
 * modules, a Python import list). */
static int trained_and_predicted(const char *modules, const char *checkpoint, int mult)
{
	struct test_proc p;
	uint8_t px[64 * 64]; /* a synthetic run's stored side is its size: the whole is scored */
	char err[512], cmd[512];

	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import %s'", modules);
	test_run(cmd, 60, &p);
	int have = p.exit_code == 0;
	test_proc_free(&p);
	if (!have)
		return -1;
	chexnet("train --synthetic --quiet --out ck --backend ref --size 64 --batch 2 "
		"--synthetic-images 2", &p, 100);
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	for (int i = 0; i < 64 * 64; i++)
		px[i] = (uint8_t)((i * mult) ^ (i / 64));
	char *png = test_path(test_tmpdir(), "x.png");
	CHECK(image_write_png_gray(png, px, 64, 64, err, sizeof(err)) == 0);
	free(png);
	snprintf(cmd, sizeof(cmd), "predict --checkpoint %s --backend ref --size 64 x.png > "
		 "predicted.txt", checkpoint);
	chexnet(cmd, &p, 60);
	int ok = p.exit_code == 0;
	CHECK_INT(p.exit_code, 0);
	test_proc_free(&p);
	return ok;
}

static void test_checkpoint_loads_in_pytorch(void)
{
	struct test_proc p;
	char cmd[4096];
	int ready = trained_and_predicted("torch, torchvision", "ck/last", 13);

	if (ready < 0)
		SKIP("python3-torch/torchvision not installed (/usr/bin/python3 cannot import them)");
	if (!ready)
		return;
	snprintf(cmd, sizeof(cmd), "cd '%s' && /usr/bin/python3 '%s/tests/ref/torch_check.py' ck/last 64 x.png predicted.txt",
		 test_tmpdir(), test_src_dir());
	test_run(cmd, 100, &p);
	CHECK_MSG(p.exit_code == 0, "torch_check: %s %s", p.out, p.err);
	test_proc_free(&p);
}

/* contrib/chexnet-onnx: a checkpoint as ONNX (Debian's python3-torch,
 * -torchvision, -onnx export it) gives `chexnet predict`'s probabilities
 * within 1e-4 in onnxruntime (the tests' PyPI environment), preprocessing
 * read from the model's metadata alone (tests/ref/onnx_check.py); a
 * state dict that is not chexnet's is refused in one line, nothing
 * written. */
static void test_checkpoint_exports_to_onnx(void)
{
	struct test_proc p;
	char cmd[4096];
	int ready = trained_and_predicted("torch, torchvision, onnx", "ck/best", 7);

	if (ready < 0)
		SKIP("python3-torch/torchvision/onnx not installed (/usr/bin/python3 cannot import them)");
	if (!ready)
		return;
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/contrib/chexnet-onnx' ck/best ck.onnx && "
		 "'%s/tests/pyenv.sh' '%s' && '%s/pyenv/bin/python' -W ignore '%s/tests/ref/onnx_check.py' "
		 "ck.onnx x.png predicted.txt", test_tmpdir(), test_src_dir(), test_src_dir(),
		 test_build_dir(), test_build_dir(), test_src_dir());
	CHECK(test_run(cmd, 240, &p) == 0);
	CHECK_MSG(p.exit_code == 0 && strstr(p.out, "ok\n"), "export and check: %s %s", p.out, p.err);
	test_proc_free(&p);
	/* a safetensors file with no chexnet metadata: refused, nothing written */
	char *foreign = test_path(test_tmpdir(), "foreign");
	char *file = test_path(foreign, "model.safetensors");
	static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"}}";
	uint8_t blob[8 + sizeof(header)] = { sizeof(header) - 1 };
	memcpy(blob + 8, header, sizeof(header) - 1);
	CHECK_INT(mkdir(foreign, 0755), 0);
	CHECK_INT(test_write_file(file, blob, 8 + sizeof(header) - 1), 0);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s/contrib/chexnet-onnx' foreign f.onnx; echo rc=$?; "
		 "ls -A | grep onnx$", test_tmpdir(), test_src_dir());
	CHECK(test_run(cmd, 120, &p) == 0);
	CHECK_STR(p.out, "rc=1\nck.onnx\n");
	CHECK_CONTAINS(p.err, "chexnet-onnx: 'foreign/model.safetensors': not a chexnet checkpoint "
		       "(no metadata 'setting.model'): refused\n");
	CHECK_MSG(!strchr(p.err, '\n') || !strchr(p.err, '\n')[1], "more than one line: %s", p.err);
	test_proc_free(&p);
	free(file);
	free(foreign);
}

/* One version (the VERSION file): --version, the start-up line. */
static void test_version_from_one_place(void)
{
	struct test_proc p;
	char *path = test_path(test_src_dir(), "VERSION");
	char *version = path ? test_read_file(path, NULL) : NULL, want[256];

	CHECK(version != NULL);
	if (!version) {
		free(path);
		return;
	}
	version[strcspn(version, "\n")] = '\0';
	CHECK(version[0] != '\0');
	chexnet("--version", &p, 10);
	CHECK_INT(p.exit_code, 0);
	snprintf(want, sizeof(want), "chexnet %s\n", version);
	CHECK_STR(p.out, want);
	test_proc_free(&p);
	chexnet("bench " ONE " --batch 2 --steps 1", &p, 60);
	CHECK_INT(p.exit_code, 0);
	snprintf(want, sizeof(want), " px), chexnet %s\n", version);
	CHECK_CONTAINS(p.err, want);
	test_proc_free(&p);
	free(version);
	free(path);
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle))
		n++;
	return n;
}

/* --backend auto, pure: each case's choice, reason and warning. */
static void expect_choice(const char *requested, const struct backend_env *env, const char *name,
			  const char *reason, const char *warning)
{
	struct backend_choice c;
	struct trainer_error err = { "" };
	CHECK_INT(backend_choose(requested, env, &c, &err), 0);
	CHECK_STR(c.name, name);
	CHECK_STR(c.reason, reason);
	if (warning)
		CHECK_CONTAINS(c.warning, warning);
	else
		CHECK_STR(c.warning, "");
}

static void test_backend_auto_choice(void)
{
	struct backend_env e = { .has_gpu = 1, .has_cpu = 1, .device_why = "no CUDA-capable device" };
	expect_choice("auto", &e, "cpu", "auto: no usable CUDA device", NULL);          /* no device */
	e.devices = 2;
	expect_choice("auto", &e, "gpu", "auto: 2 CUDA devices visible", NULL);         /* a device */
	e.devices = 0;
	e.visible = "";
	expect_choice("auto", &e, "cpu", "auto: CUDA_VISIBLE_DEVICES is empty", NULL);  /* hidden */
	e.visible = NULL;
	e.busid = "0000:3b:00.0";                                                       /* granted */
	expect_choice("auto", &e, "cpu", "auto: no usable CUDA device",
		      "warning: GPUs granted (HVD_GPU_BUSID=0000:3b:00.0) but none usable: no "
		      "CUDA-capable device; training on the cpu backend");
	struct backend_env cpu_only = { .has_cpu = 1, .visible = "0,1" };               /* no CUDA */
	expect_choice("auto", &cpu_only, "cpu", "auto: no GPU backend in this build",
		      "GPUs granted (CUDA_VISIBLE_DEVICES=0,1) but none usable: this chexnet was "
		      "built without CUDA");
	struct backend_env ref_only = { 0 };
	expect_choice("auto", &ref_only, "ref", "auto: no GPU backend in this build", NULL);
	expect_choice("cpu", &e, "cpu", "", NULL);                                      /* by name */
	struct backend_choice c;
	struct trainer_error err = { "" };
	CHECK_INT(backend_choose("gpu", &e, &c, &err), -1);                             /* no device */
	CHECK_CONTAINS(err.msg, "--backend: 'gpu': no usable CUDA device (no CUDA-capable device)");
}

/* The start-up lines of a command that stops at once after them (an
 * empty checkpoint folder, made first): env and flags as given. */
#define STARTUP "eval --synthetic --checkpoint none --size 32 --batch 2"
#define MAKE_NONE "-h > /dev/null; mkdir -p none"

/* This machine has no usable GPU: auto says so on its own line, warns
 * once when GPUs were granted, and an explicit gpu is refused. */
static void test_backend_auto_on_this_machine(void)
{
	struct test_proc p;
	chexnet(MAKE_NONE, &p, 10);
	test_proc_free(&p);
	chexnet(STARTUP " --backend ref", &p, 60);
	CHECK_CONTAINS(p.err, "(backend ref, fp32,");
	CHECK(!strstr(p.err, "chexnet: backend ")); /* asked by name: no reason line */
	test_proc_free(&p);
	chexnet(STARTUP, &p, 60);
	int gpu = strstr(p.err, "chexnet: backend gpu (auto: ") != NULL;
	if (!gpu)
		CHECK_CONTAINS(p.err, "chexnet: backend cpu (auto: ");
	CHECK(!strstr(p.err, "warning: GPUs granted"));
	test_proc_free(&p);
	if (gpu)
		return;
	setenv("CUDA_VISIBLE_DEVICES", "0", 1);
	chexnet(STARTUP, &p, 60);
	unsetenv("CUDA_VISIBLE_DEVICES");
	CHECK_INT(count_of(p.err, "chexnet: warning: GPUs granted (CUDA_VISIBLE_DEVICES=0) but none "
			   "usable: "), 1);
	test_proc_free(&p);
	chexnet(STARTUP " --backend gpu", &p, 60);
	if (!strstr(p.err, "not in this build")) {
		CHECK_INT(p.exit_code, 2);
		CHECK_CONTAINS(p.err, "chexnet: --backend: 'gpu': no usable CUDA device (");
	}
	test_proc_free(&p);
}

/* What --precision auto must say under ISA cap `cap` (NULL: none), from
 * what an explicit --precision bf16 starts on there: bf16 only where the
 * ISA computes it natively (avx512_core_bf16, AMX); fp32 where it is only
 * emulated (avx512_core: slower than fp32) or missing. */
static void auto_under(const char *cap)
{
	struct test_proc p;
	if (cap)
		setenv("ONEDNN_MAX_CPU_ISA", cap, 1);
	chexnet(STARTUP " --backend cpu --precision bf16", &p, 60);
	int bf16 = strstr(p.err, "(backend cpu, bf16,") != NULL;
	int native = strstr(p.err, "(backend cpu, bf16, avx512_core_bf16,") ||
		     strstr(p.err, "(backend cpu, bf16, avx512_core_amx");
	test_proc_free(&p);
	chexnet(STARTUP " --backend cpu --precision auto", &p, 60);
	if (cap)
		unsetenv("ONEDNN_MAX_CPU_ISA");
	CHECK_CONTAINS(p.err, native ? "chexnet: precision bf16 (auto: this CPU has native bf16)"
			  : bf16 ? "chexnet: precision fp32 (auto: bf16 only emulated on this CPU, "
				   "slower than fp32)"
			  : "chexnet: precision fp32 (auto: no bf16 kernels on this CPU)");
	CHECK_CONTAINS(p.err, native ? "(backend cpu, bf16," : "(backend cpu, fp32,");
	test_proc_free(&p);
}

/* --precision auto: fp32 on ref; on the cpu backend natively, capped to
 * AVX512_CORE (emulated bf16 where the CPU has AVX-512) and to AVX2 (no
 * bf16 kernels), as auto_under() says (the start-up line shows the
 * resolved value). */
static void test_precision_auto(void)
{
	struct test_proc p;
	chexnet(MAKE_NONE, &p, 10);
	test_proc_free(&p);
	chexnet(STARTUP " --backend ref --precision auto", &p, 60);
	CHECK_CONTAINS(p.err, "chexnet: precision fp32 (auto: the ref backend computes in fp32)");
	test_proc_free(&p);
	auto_under(NULL);
	auto_under("AVX512_CORE");
	setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
	chexnet(STARTUP " --backend cpu --precision auto", &p, 60);
	unsetenv("ONEDNN_MAX_CPU_ISA");
	CHECK_CONTAINS(p.err, "chexnet: precision fp32 (auto: no bf16 kernels on this CPU)");
	test_proc_free(&p);
}

/* Usage errors before the runtime starts (exit 2, one line, no start-up
 * report): a missing or empty --data, or one without a data set's index
 * or label files; a model name that is not one;
 * --opt=value for a flag with a value, refused for a switch; a run folder
 * without best/ names last/; one process prints no start-up table unless
 * --verbose. */
static void test_messages_before_start_up(void)
{
	static const struct { const char *args, *line; } bad[] = {
		{ "train --data nothere --size 32", "chexnet: train: --data 'nothere': no such directory" },
		{ "eval --checkpoint x --data empty", "chexnet: eval: --data 'empty': empty" },
		{ "train --data notes --size 32", "chexnet: train: --data 'notes': no index.txt, label "
		  "or list file" },
		{ "train --synthetic --model densenet", "--model: 'densenet': expected densenet121 or" },
		{ "train --synthetic --quiet=1", "chexnet: --quiet: '--quiet=1': takes no value" },
		{ "train --synthetic --lr=fast", "--lr 'fast'" },
		{ "eval --checkpoint r2 --synthetic", "'r2' is a run without best/ (no validation yet): "
		  "use --checkpoint r2/last" },
		{ "train --synthetic --init nope.safetensors", "chexnet: train: --init 'nope.safetensors': "
		  "No such file or directory" },
		{ "train --synthetic --resume nowhere", "chexnet: train: --resume 'nowhere': not a run "
		  "folder" },
		{ "predict --checkpoint nowhere x.png", "chexnet: predict: --checkpoint 'nowhere': No such" },
		{ "train --synthetic --backend ref --precision bf16", "chexnet: --precision: 'bf16': "
		  "the ref backend computes in fp32 only" },
		{ "train --synthetic --backend ref --precision tf32", "chexnet: --precision: 'tf32': "
		  "the ref backend computes in fp32 only" },
	};
	struct test_proc p;

	chexnet("-h > /dev/null; mkdir -p empty notes r2/last && touch r2/last/model.safetensors "
		"notes/readme.txt", &p, 10);
	test_proc_free(&p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		chexnet(bad[i].args, &p, 30);
		CHECK_MSG(p.exit_code == 2, "%s: exit %d", bad[i].args, p.exit_code);
		CHECK_CONTAINS(p.err, bad[i].line);
		CHECK_MSG(!strstr(p.err, "hvd:"), "%s: the runtime started: %s", bad[i].args, p.err);
		test_proc_free(&p);
	}
	chexnet("train --synthetic --quiet --out=o --lr=0.01 --steps=1 --epochs=1 " SMALL, &p, 100);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	CHECK(!strstr(p.err, "hvd: start-up"));
	test_proc_free(&p);
	char *path = test_path(test_tmpdir(), "o/run.json");
	char *text = test_read_file(path, NULL);
	CHECK_CONTAINS(text, "\"lr\":\t0.01,");
	free(text);
	free(path);
	chexnet("train --synthetic --quiet --verbose --out o2 --steps 1 " SMALL, &p, 100);
	CHECK_MSG(p.exit_code == 0, "%s", test_tail(p.err, 400));
	CHECK_CONTAINS(p.err, "hvd: start-up: 1 rank");
	test_proc_free(&p);
}

const struct test_case cli_tests[] = {
	{ "version_from_one_place", test_version_from_one_place },
	{ "backend_auto_choice", test_backend_auto_choice },
	{ "backend_auto_on_this_machine", test_backend_auto_on_this_machine },
	{ "precision_auto", test_precision_auto },
	{ "bad_number_is_an_error", test_bad_number_is_an_error },
	{ "unknown_flag_and_command_are_errors", test_unknown_flag_and_command_are_errors },
	{ "relaunch_needs_the_runs_own_command_line", test_relaunch_needs_the_runs_own_command_line },
	{ "help_for_each_command", test_help_for_each_command },
	{ "json_progress_and_determinism", test_json_progress_and_determinism },
	{ "eval_and_predict_on_a_checkpoint", test_eval_and_predict_on_a_checkpoint },
	{ "messages_before_start_up", test_messages_before_start_up },
	{ "checkpoint_loads_in_pytorch", test_checkpoint_loads_in_pytorch },
	{ "checkpoint_exports_to_onnx", test_checkpoint_exports_to_onnx },
	{ 0 }
};
