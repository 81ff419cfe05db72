/* commands.c - chexnet's command table (commands.h).
 * What it does not do: parse options (cli.c) or end a run (main.c).
 */
#include <string.h>

#include "cmd/commands.h"
#include "cmd/curves.h"
#include "cmd/data_cmds.h"
#include "cmd/run.h"

#define OWN(name, summary, bit, run) { name, summary, bit, run, NULL, NULL, 0 }

const struct command commands[] = {
	OWN("train", "train a model (--data DIR or --synthetic)", SETTING_TRAIN, run_train),
	OWN("eval", "loss and per-class AUROC of a checkpoint", SETTING_EVAL, run_eval),
	{ "predict", "14 probabilities per image (--cam DIR: heat maps): predict --checkpoint DIR "
	  "IMAGE...", SETTING_PREDICT, run_predict, NULL, NULL, 1 },
	OWN("bench", "training throughput on synthetic in-memory data (images/s)", SETTING_BENCH,
	    run_bench),
	OWN("locate", "where CAMs point on generated images (chexnet synth's seed, --seed)",
	    SETTING_LOCATE, run_locate),
	{ "curves", "loss, AUROC and lr of runs against steps: curves RUN... [--out FILE.png]", 0,
	  NULL, run_curves, &curves_options, 1 },
	{ NULL, NULL, 0, NULL, NULL, NULL, 0 },
};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void commands_usage(FILE *f)
{
	fprintf(f, "usage: chexnet COMMAND [options]   (chexnet COMMAND --help)\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	for (const struct data_command *c = data_commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "  %-8s %s\n", "--version", "print the version");
}
