/* fuzz_recipe.c - libFuzzer target for the reader of `chexnet train
 * --config FILE` (trainer/cmd/recipe_read.c): the input is the file,
 * read as a YAML mapping or, when it is a JSON object with a "format", a
 * run.json. It must be accepted or refused with one line naming the
 * file; what it accepts must hold up: at most YAML_MAP_MAX keys, each
 * non-empty, NUL-terminated, without a control character and given once,
 * values NUL-terminated without one, and 64 hex digits of SHA-256.
 * Seeds: a recipe as --print-config writes one, a JSON object, a run.json.
 * What it does not do: give the keys a meaning (test_recipe.c does).
 */
#include <stdlib.h>
#include <string.h>

#include "base/text_control.h"
#include "cmd/recipe_read.h"
#include "fuzz_files.h"

static struct yaml_map map;

static void check(const struct yaml_map *m, const char *sha)
{
	if (m->count < 0 || m->count > YAML_MAP_MAX || strlen(sha) != 64 ||
	    strspn(sha, "0123456789abcdef") != 64)
		abort();
	for (int i = 0; i < m->count; i++) {
		const struct yaml_entry *e = &m->entries[i];
		if (!memchr(e->key, 0, sizeof(e->key)) || !memchr(e->value, 0, sizeof(e->value)) ||
		    !e->key[0] || text_control_at(e->key) >= 0 || text_control_at(e->value) >= 0)
			abort();
		for (int j = 0; j < i; j++)
			if (strcmp(m->entries[j].key, e->key) == 0)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_write("recipe.yaml", data, size);
	struct trainer_error err = { "" };
	char sha[65] = "";
	int record = 0;

	if (recipe_read(path, &map, &record, sha, &err) == 0)
		check(&map, sha);
	else if (!err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, path))
		abort();
	return 0;
}

static const char print_config[] =
	"# chexnet train's effective settings (--print-config)\n"
	"model: densenet121\nbackend: cpu\nprecision: fp32\nsize: 224\nbatch: 16\n"
	"lr: 0.001\nseed: 1\ndata: \"/data/nih\"\nmemory_efficient: false\ntest: true\n";
static const char json_object[] = "{\"batch\": 8, \"lr\": 1e-4, \"data\": \"synthetic\"}\n";
static const char run_json[] =
	"{\"format\": \"chexnet-run 1\", \"start_time\": \"2026-01-01T00:00:00Z\", "
	"\"command_line\": [\"chexnet\", \"train\"], \"settings\": {\"model\": \"resnet50\", "
	"\"batch\": 4, \"ranks\": 2}, \"versions\": {}, \"hosts\": [\"n1\"], \"resumes\": [], "
	"\"config\": {\"path\": \"r.yaml\", \"sha256\": \"00\"}}\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_empty_corpus(*argc, *argv);

	if (!dir)
		return 0;
	fuzz_seed(dir, "seed-print-config", print_config, sizeof(print_config) - 1);
	fuzz_seed(dir, "seed-json", json_object, sizeof(json_object) - 1);
	fuzz_seed(dir, "seed-run-json", run_json, sizeof(run_json) - 1);
	return 0;
}
