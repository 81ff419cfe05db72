/* cmd/pack.c - `chexnet pack --data DIR --out DIR [--size 256] [--shards N]
 * [--val-fraction 0.1] [--threads N] [--views PA,AP] [--skip-unreadable]
 * [--max-pixels N]`
 * and `chexnet pack --data DIR --preview N PREVIEW_DIR` (data/pack/preview.c): options, progress line (images/s,
 * ETA) on stderr, summary on stdout. What it does not do: packing itself
 * (data/pack/pack.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/args.h"
#include "data/dicom/dicom_budget.h"
#include "data/pack/pack.h"
#include "data/pack/shard.h"
#include "data/sets/view.h"

int cmd_pack(int argc, char **argv);

struct progress_state { int tty; int last_decile; };

static void print_progress(void *ctx, size_t done, size_t total, double seconds)
{
	struct progress_state *ps = ctx;
	double rate = seconds > 0 ? (double)done / seconds : 0;
	double eta = rate > 0 ? (double)(total - done) / rate : 0;
	int decile = total ? (int)(10 * done / total) : 10;
	if (!ps->tty && decile == ps->last_decile)
		return;
	ps->last_decile = decile;
	fprintf(stderr, "%spack: %zu/%zu images  %.0f images/s  ETA %d:%02d%s", ps->tty ? "\r" : "",
		done, total, rate, (int)eta / 60, (int)eta % 60, ps->tty ? "  " : "\n");
	if (ps->tty && done == total)
		fputc('\n', stderr);
}

/* The aspect rule, said whenever it changed an image. */
static void note_padded(size_t padded, const char *what)
{
	if (padded)
		printf("chexnet: note: %zu images %s were not square: padded to a square with black "
		       "bars (centred, never cropped or stretched)\n", padded, what);
}

static int run_preview(const struct pack_config *cfg, size_t n, const char *dir)
{
	char err[2048];
	size_t written = 0, padded = 0;
	if (data_pack_preview(cfg, n, dir, &written, &padded, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("chexnet: wrote %zu preview images of '%s' at %dx%d to '%s'\n", written, cfg->data_dir,
	       cfg->size, cfg->size, dir);
	note_padded(padded, "written");
	return 0;
}

static int pack_usage(const char *why)
{
	fprintf(stderr, "chexnet: pack: %s\nusage: chexnet pack --data DIR --out DIR [--size 256] "
		"[--shards N] [--val-fraction 0.1] [--threads N] [--views PA,AP,...] [--skip-unreadable]\n"
		"       [--max-pixels 67108864]\n"
		"       chexnet pack --data DIR --preview N PREVIEW_DIR [--size 256] [--views ...]\n", why);
	return 2;
}

int cmd_pack(int argc, char **argv)
{
	struct pack_config cfg = { .size = 256, .val_fraction = 0.1 };
	struct progress_state ps = { .tty = isatty(2), .last_decile = -1 };
	struct pack_result res;
	char err[2048];
	const char *preview_dir = NULL;
	long v, preview_n = 0;
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(opt, "--help") == 0)
			return pack_usage("pack a data set into shards"), 0;
		if (strcmp(opt, "--skip-unreadable") == 0) {
			cfg.skip_unreadable = 1;
			continue;
		}
		if (strcmp(opt, "--preview") == 0) {   /* two values: N DIR */
			if (i + 2 >= argc)
				return pack_usage("--preview needs N and DIR");
			if (data_arg_long(opt, argv[i + 1], 1, 100000, &preview_n, err, sizeof(err)) != 0)
				return fprintf(stderr, "%s\n", err), 2;
			preview_dir = argv[i + 2];
			i += 2;
			continue;
		}
		if (!val)
			return pack_usage("missing value after the last option");
		i++;
		if (strcmp(opt, "--data") == 0)
			cfg.data_dir = val;
		else if (strcmp(opt, "--out") == 0)
			cfg.out_dir = val;
		else if (strcmp(opt, "--size") == 0 && data_arg_long(opt, val, 8, 4096, &v, err, sizeof(err)) == 0)
			cfg.size = (int)v;
		else if (strcmp(opt, "--shards") == 0 && data_arg_long(opt, val, 1, 1 << 20, &v, err, sizeof(err)) == 0)
			cfg.shards = (int)v;
		else if (strcmp(opt, "--threads") == 0 && data_arg_long(opt, val, 1, 256, &v, err, sizeof(err)) == 0)
			cfg.threads = (int)v;
		else if (strcmp(opt, "--views") == 0 && data_views_parse(val, &cfg.views, err, sizeof(err)) == 0)
			;
		else if (strcmp(opt, "--max-pixels") == 0) {
			if (data_arg_long(opt, val, (long)DICOM_MAX_PIXELS_LOWEST, (long)DICOM_MAX_PIXELS_HIGHEST, &v,
					  err, sizeof(err)) != 0 || dicom_budget_set((uint64_t)v, err, sizeof(err)) != 0)
				return fprintf(stderr, "%s\n", err), 2;
		}
		else if (strcmp(opt, "--val-fraction") == 0 &&
			 data_arg_double(opt, val, 0, 0.99, &cfg.val_fraction, err, sizeof(err)) == 0)
			;
		else if (!strcmp(opt, "--size") || !strcmp(opt, "--shards") || !strcmp(opt, "--threads") ||
			 !strcmp(opt, "--val-fraction") || !strcmp(opt, "--views"))
			return fprintf(stderr, "%s\n", err), 2;
		else
			return fprintf(stderr, "chexnet: pack: option '%s': unknown\n", opt), 2;
	}
	if (cfg.data_dir && preview_dir)
		return run_preview(&cfg, (size_t)preview_n, preview_dir);
	if (!cfg.data_dir || !cfg.out_dir)
		return pack_usage("--data and --out are required (or --data and --preview N DIR)");
	cfg.progress = print_progress;
	cfg.progress_ctx = &ps;
	if (data_pack(&cfg, &res, err, sizeof(err)) != 0) {
		if (ps.tty)
			fputc('\n', stderr);
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	size_t total = res.records[0] + res.records[1] + res.records[2];
	printf("chexnet: packed %zu images (train %zu, val %zu, test %zu) at %dx%d into %d shards "
	       "(%d kept from a previous run) in '%s': %.1f s, %.0f images/s\n", total, res.records[0],
	       res.records[1], res.records[2], cfg.size, cfg.size, res.shards, res.kept, cfg.out_dir,
	       res.seconds, res.seconds > 0 ? (double)total / res.seconds : 0);
	note_padded(res.padded, "decoded");
	if (res.other_modality)
		printf("chexnet: note: %zu DICOM images are not CR, DX or DR (e.g. '%s'): packed as grayscale "
		       "images, the model was made for chest X-rays\n", res.other_modality, res.other_example);
	if (dicom_reader_peak_kib() > 0)
		printf("chexnet: DICOM readers: peak RSS %.1f MiB (the largest of them); memory limit %ld MiB "
		       "+ 2 x the file's size each\n", dicom_reader_peak_kib() / 1024.0,
		       dicom_reader_limit_mib(0, err, sizeof(err)));
	if (res.skipped)
		printf("chexnet: skipped %zu unreadable images: their errors are in '%s/skipped.txt'\n",
		       res.skipped, cfg.out_dir);
	return 0;
}
