/* cmd/synth.c - `chexnet synth --out DIR --count N [--size 256] [--seed S]
 * [--floor 0.05] [--threads N]`: its options (one table,
 * base/option_table.h) and the summary.
 * What it does not do: generate (data/synth/synth.c).
 */
#include <stddef.h>
#include <stdio.h>

#include "base/option_table.h"
#include "data/synth/synth.h"

int cmd_synth(int argc, char **argv);
extern const struct option_table synth_options;   /* data_cmds.h */

/* synth's options, one row each. */
struct synth_options {
	const char *out;
	long count, size, threads;
	uint64_t seed;
	double floor;
};

#define OFF(field) offsetof(struct synth_options, field)
static const struct setting synth_rows[] = {
	{ "--out", .type = SETTING_TEXT, .commands = 1, .offset = OFF(out),
	  .help = "the data set's directory (NIH layout: images/, the label CSV, the split "
		  "lists): new, empty, or one synth made (its .chexnet-synth)" },
	{ "--count", .type = SETTING_LONG, .commands = 1, .lo = 1, .hi = 10000000,
	  .offset = OFF(count), .help = "images" },
	{ "--size", .type = SETTING_LONG, .commands = 1, .lo = 16, .hi = 4096, .fallback = "256",
	  .offset = OFF(size), .help = "image side in pixels" },
	{ "--seed", .type = SETTING_U64, .commands = 1, .fallback = "0", .offset = OFF(seed),
	  .help = "random seed (chexnet locate --seed draws the same images)" },
	{ "--floor", .type = SETTING_DOUBLE, .commands = 1, .lo = 0, .hi = 0.5, .fallback = "0.05",
	  .offset = OFF(floor), .help = "the lowest frequency of each finding (rarer ones are drawn this often)" },
	{ "--threads", .type = SETTING_LONG, .commands = 1, .lo = 1, .hi = 256,
	  .offset = OFF(threads), .help = "threads (default: allowed CPUs)" },
	{ "--help", .type = SETTING_HELP, .commands = 1, .help = "this help" },
};
#undef OFF

const struct option_table synth_options = {
	.rows = synth_rows, .count = sizeof(synth_rows) / sizeof(synth_rows[0]),
};

int cmd_synth(int argc, char **argv)
{
	struct synth_options o = { 0 };
	struct trainer_error e = { "" };
	char err[2048];

	if (option_defaults(&synth_options, 1, &o, &e))
		return fprintf(stderr, "chexnet: synth: %s\n", e.msg), 2;
	int rc = option_parse(&synth_options, 1, NULL, argc, argv, &o, NULL, NULL);
	if (rc)
		return rc < 0 ? 2 : 0;
	if (!o.out || !o.count) {
		fprintf(stderr, "chexnet: synth: --out and --count are required (chexnet synth --help)\n");
		return 2;
	}
	struct synth_config cfg = { .out_dir = o.out, .count = (size_t)o.count, .size = (int)o.size,
				    .threads = (int)o.threads, .seed = o.seed, .floor = o.floor };
	if (data_synth(&cfg, err, sizeof(err)) != 0)
		return fprintf(stderr, "%s\n", err), 1;
	printf("chexnet: synth: %zu images of %dx%d (seed %llu) in '%s'\n", cfg.count, cfg.size,
	       cfg.size, (unsigned long long)cfg.seed, cfg.out_dir);
	return 0;
}
