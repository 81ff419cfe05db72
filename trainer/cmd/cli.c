/* cli.c - strict option parsing for the trainer's own commands by the
 * rows of the settings table (train/settings.h, read through
 * base/option_table.h): --opt value or --opt=value, each row's own
 * commands, type, range and choices; then --config's recipe below them
 * (cmd/config_file.h); the commands' help from the same rows; --backend
 * and --precision auto resolved. What it does not do:
 * run anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/config_file.h"

int cli_parse(const struct command *c, int argc, char **argv, struct settings *o)
{
	static char **inputs;   /* predict's images in order (options may follow them) */
	int bit = c->bit;
	struct trainer_error err = { "" };

	if (settings_init(o, c->name, bit, &err))
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	o->train.argc = argc;
	o->train.argv = argv;
	free(inputs);
	if (!(inputs = calloc((size_t)argc, sizeof(char *))))
		return fprintf(stderr, "chexnet: out of memory\n"), -1;
	o->inputs = inputs;
	int rc = option_parse(&settings_options, bit, c->operands ? " IMAGE..." : NULL, argc, argv,
			      o, c->operands ? inputs : NULL, &o->input_count);
	if (rc)
		return rc;
	if (o->train.config && config_file_apply(o))
		return -1;
	struct session_config *s = &o->train.session;
	if (backend_resolve(s->backend, &s->chosen, &err))
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	s->backend = s->chosen.name;
	if (s->precision_auto)
		s->precision = backend_precision_auto(s->backend, s->chosen.precision_why,
						      sizeof(s->chosen.precision_why));
	if (precision_check(s->precision, s->backend, &err))   /* as create says, before start-up */
		return fprintf(stderr, "chexnet: %s\n", err.msg), -1;
	return 0;
}

