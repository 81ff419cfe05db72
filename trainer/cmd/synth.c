/* cmd/synth.c - `chexnet synth --out DIR --count N [--size 256] [--seed S]
 * [--floor 0.05] [--threads N]`: options and summary.
 * What it does not do: generate (data/synth/synth.c).
 */
#include <stdio.h>
#include <string.h>

#include "base/args.h"
#include "data/synth/synth.h"

int cmd_synth(int argc, char **argv);

static int synth_usage(const char *why)
{
	fprintf(stderr, "chexnet: synth: %s\nusage: chexnet synth --out DIR --count N [--size 256] "
		"[--seed S] [--floor 0.05] [--threads N]\n", why);
	return 2;
}

int cmd_synth(int argc, char **argv)
{
	struct synth_config cfg = { .size = 256, .floor = 0.05 };
	char err[2048];
	long v;
	int rc = 0;
	for (int i = 1; i < argc && rc == 0; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(opt, "--help") == 0)
			return synth_usage("generate a learnable data set in the NIH layout"), 0;
		if (!val)
			return synth_usage("missing value after the last option");
		i++;
		if (strcmp(opt, "--out") == 0)
			cfg.out_dir = val;
		else if (strcmp(opt, "--count") == 0)
			rc = data_arg_long(opt, val, 1, 10000000, &v, err, sizeof(err)), cfg.count = (size_t)v;
		else if (strcmp(opt, "--size") == 0)
			rc = data_arg_long(opt, val, 16, 4096, &v, err, sizeof(err)), cfg.size = (int)v;
		else if (strcmp(opt, "--threads") == 0)
			rc = data_arg_long(opt, val, 1, 256, &v, err, sizeof(err)), cfg.threads = (int)v;
		else if (strcmp(opt, "--seed") == 0)
			rc = data_arg_u64(opt, val, &cfg.seed, err, sizeof(err));
		else if (strcmp(opt, "--floor") == 0)
			rc = data_arg_double(opt, val, 0, 0.5, &cfg.floor, err, sizeof(err));
		else
			return fprintf(stderr, "chexnet: synth: option '%s': unknown\n", opt), 2;
	}
	if (rc != 0)
		return fprintf(stderr, "%s\n", err), 2;
	if (!cfg.out_dir || !cfg.count)
		return synth_usage("--out and --count are required");
	if (data_synth(&cfg, err, sizeof(err)) != 0)
		return fprintf(stderr, "%s\n", err), 1;
	printf("chexnet: synth: %zu images of %dx%d (seed %llu) in '%s'\n", cfg.count, cfg.size,
	       cfg.size, (unsigned long long)cfg.seed, cfg.out_dir);
	return 0;
}
