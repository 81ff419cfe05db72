/* cmd/config.c - eval's config and run.json's given settings from a
 * command's settings (cmd/config.h). */
#include <string.h>

#include "cmd/config.h"

struct eval_config eval_config_of(const struct settings *o)
{
	return (struct eval_config){ .session = o->train.session, .data = o->train.data,
				     .checkpoint = o->checkpoint, .split = o->split,
				     .weighted_loss = o->train.weighted_loss };
}

int record_of(const struct settings *o, struct run_settings *out, struct trainer_error *err)
{
	char value[RUN_SETTING_VALUE];

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < settings_count; i++) {
		const struct setting *row = &settings_table[i];
		if (!row->flag || !row->key)
			continue;
		option_format(o, row, value, sizeof(value));
		if (run_settings_set(out, row->key, value, err))
			return -1;
	}
	return 0;
}
