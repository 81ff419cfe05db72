/* base/yaml_map.h - a YAML document that is one mapping of keys to single
 * values (a recipe: `batch: 64` a line), read by libyaml (YAML 1.1; a
 * JSON object is YAML too): each key with its value's text, whether the
 * value was written plain (unquoted: a number, a yes/no or a word) and
 * its line. Refused in one line naming the file and the line: text that
 * is not YAML, another shape (a list, a value that is a list or a
 * mapping, a second document), anchors, aliases and tags, a key given
 * twice, a key or value too long, a control character, more than
 * YAML_MAP_MAX keys, a NUL byte.
 * What it is not: what the keys mean (cmd/config_file.h) or reading the
 * file (its bytes are given).
 */
#ifndef HVD_TRAINER_BASE_YAML_MAP_H
#define HVD_TRAINER_BASE_YAML_MAP_H

#include <stddef.h>

#include "base/error.h"

#define YAML_MAP_MAX 128
#define YAML_MAP_KEY 64
#define YAML_MAP_VALUE 1024

struct yaml_entry {
	char key[YAML_MAP_KEY];
	char value[YAML_MAP_VALUE];
	int plain;                  /* unquoted, not a block literal */
	int line;                   /* from 1 */
};

struct yaml_map {
	int count;
	struct yaml_entry entries[YAML_MAP_MAX];
};

/* The len bytes of text (name: the file, for messages) into m. An empty
 * document is an empty map. 0, or -1 with err "'name': line N: why". */
int yaml_map_parse(const char *name, const char *text, size_t len, struct yaml_map *m,
		   struct trainer_error *err);

#endif
