/* cmd/recipe_read.h - a recipe file's keys and values: a YAML mapping
 * (base/yaml_map.h; a JSON object reads as YAML too) or a run.json,
 * whose "settings" it gives (train/run_record.h; its numbers unquoted),
 * read once with the SHA-256 of the bytes read. The file may be a
 * symbolic link; it must be a regular file of at most 1 MiB. A build
 * without libyaml (WITH_YAML=0, cmd/recipe_none.c) refuses every file in
 * one line.
 * What it is not: what the keys mean (cmd/config_file.h).
 */
#ifndef HVD_TRAINER_CMD_RECIPE_READ_H
#define HVD_TRAINER_CMD_RECIPE_READ_H

#include "base/error.h"
#include "base/yaml_map.h"

#define RECIPE_MAX_BYTES (1 << 20)

/* path's keys into m; *record: 1 when it is a run.json (no line numbers;
 * switches as 0 and 1); sha256: 64 hex digits. 0, or -1 with err naming
 * the file. */
int recipe_read(const char *path, struct yaml_map *m, int *record, char sha256[65],
		struct trainer_error *err);

#endif
