/* cmd/recipe_read.c - a recipe file read once (recipe_read.h): its bytes,
 * their SHA-256 (nettle), then a run.json's settings or a YAML mapping.
 * What it does not do: give the keys a meaning.
 */
#include <cjson/cJSON.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/regular_file.h"
#include "cmd/recipe_read.h"
#include "train/run_record.h"

static void hex_sha256(const char *buf, size_t len, char out[65])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, len, (const uint8_t *)buf);
	sha256_digest(&ctx, sizeof(d), d);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* 1 when text is a JSON object with a "format" field: a run record. */
static int is_record(const char *text)
{
	cJSON *root = cJSON_Parse(text);
	int yes = cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "format");

	cJSON_Delete(root);
	return yes;
}

static int record_entries(const char *path, const char *text, struct yaml_map *m,
			  struct trainer_error *err)
{
	static struct run_settings s;

	if (run_record_parse(path, text, &s, err))
		return -1;
	m->count = 0;
	for (int i = 0; i < s.count && i < YAML_MAP_MAX; i++) {
		struct yaml_entry *e = &m->entries[m->count++];
		int numeric = 0;
		run_setting_known(s.items[i].key, NULL, NULL, &numeric);
		snprintf(e->key, sizeof(e->key), "%s", s.items[i].key);
		snprintf(e->value, sizeof(e->value), "%s", s.items[i].value);
		e->plain = numeric;
		e->line = 0;
	}
	return 0;
}

int recipe_read(const char *path, struct yaml_map *m, int *record, char sha256[65],
		struct trainer_error *err)
{
	size_t len = 0;
	char why[128];
	char *text = regular_file_read(path, 1, RECIPE_MAX_BYTES, &len, why, sizeof(why));

	if (!text)
		return trainer_error_set(err, "'%s': %s", path, why);
	hex_sha256(text, len, sha256);
	*record = memchr(text, '\0', len) == NULL && is_record(text);
	int rc = *record ? record_entries(path, text, m, err)
		 : yaml_map_parse(path, text, len, m, err);
	free(text);
	return rc;
}
