/* train/run_settings.h - the effective settings of a training run as
 * named text values (model, backend, precision, size, batch, ranks,
 * accumulation, global batch, optimizer, learning rate, loss, seed, data
 * and its fingerprint, ...; the view: size, stored_size, pixels, aspect,
 * crop, normalise), in one fixed order, each known key with its
 * kind: MEANING (a change alters what the run computes: refused on
 * --resume unless allowed) or FREE (may change between sessions: recorded
 * as changed), and the flag that sets it. Numbers are kept as the
 * shortest text that reads back to the same double. The same values
 * travel in run.json (train/run_record.h) and in each checkpoint's
 * metadata as "setting.KEY" (train/checkpoint.h).
 * What this is not: choosing the values (loop/run_dir.c) or any file.
 */
#ifndef HVD_TRAINER_RUN_SETTINGS_H
#define HVD_TRAINER_RUN_SETTINGS_H

#include <stddef.h>

#include "base/error.h"

#define RUN_SETTINGS_MAX 64
#define RUN_SETTING_KEY 32
#define RUN_SETTING_VALUE 256
#define RUN_SETTINGS_META_PREFIX "setting."

enum run_setting_kind { RUN_SETTING_MEANING, RUN_SETTING_FREE };

struct run_setting {
	char key[RUN_SETTING_KEY];
	char value[RUN_SETTING_VALUE];
};

struct run_settings {
	int count;
	struct run_setting items[RUN_SETTINGS_MAX];
};

/* Known keys: 1 and kind/flag/numeric set, 0 for an unknown key. flag:
 * the options that set it ("--batch, --accumulate, the rank count"). */
int run_setting_known(const char *key, enum run_setting_kind *kind, const char **flag,
		      int *numeric);

/* Sets key (replacing its value); 0, or -1 for an unknown key, a full
 * table or a value too long (err names which). */
int run_settings_set(struct run_settings *s, const char *key, const char *value,
		     struct trainer_error *err);
int run_settings_set_long(struct run_settings *s, const char *key, long v,
			  struct trainer_error *err);
int run_settings_set_double(struct run_settings *s, const char *key, double v,
			    struct trainer_error *err);
/* out: every known key in the table's order (train/settings.c), its
 * value from first, else from second (may be NULL). 0 or -1 (err). */
int run_settings_join(const struct run_settings *first, const struct run_settings *second,
		      struct run_settings *out, struct trainer_error *err);
/* The value, or NULL. */
const char *run_settings_get(const struct run_settings *s, const char *key);

/* One key whose value differs between two records; the strings point
 * into them, "(none)" for a key only one side has. */
struct run_change {
	const char *key, *old_value, *new_value, *flag;
	enum run_setting_kind kind;
};

/* The differences from old to now in key order (at most max; there are
 * never more than 2 * RUN_SETTINGS_MAX). Returns their count. */
int run_settings_changes(const struct run_settings *old, const struct run_settings *now,
			 struct run_change *out, int max);

#endif
