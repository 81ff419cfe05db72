/* cmd/pack.c - `chexnet pack --data DIR --out DIR [--size 256] [--shards N]
 * [--val-fraction 0.1] [--threads N] [--views PA,AP] [--skip-unreadable]
 * [--max-pixels N]` and `chexnet pack --data DIR --preview N PREVIEW_DIR`
 * (data/pack/preview.c): its options (one table, base/option_table.h),
 * the progress line (images/s, ETA) on stderr, the summary on stdout.
 * What it does not do: packing itself (data/pack/pack.c).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/option_table.h"
#include "data/dicom/dicom_budget.h"
#include "data/pack/pack.h"
#include "data/pack/shard.h"
#include "data/sets/view.h"

int cmd_pack(int argc, char **argv);
extern const struct option_table pack_options;   /* data_cmds.h */

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

/* pack's options, one row each (base/option_table.h). */
struct pack_options {
	const char *data, *out, *views;
	long size, shards, threads, preview, max_pixels;
	double val_fraction;
	int skip_unreadable;
};

#define OFF(field) offsetof(struct pack_options, field)
static const struct setting pack_rows[] = {
	{ "--data", .type = SETTING_TEXT, .commands = 1, .offset = OFF(data),
	  .help = "the data set (NIH layout, or a generic one: data/sets/layout.h)" },
	{ "--out", .type = SETTING_TEXT, .commands = 1, .offset = OFF(out),
	  .help = "the shards' directory: new, empty, or one pack made (its .chexnet-pack)" },
	{ "--size", .type = SETTING_LONG, .commands = 1, .lo = 8, .hi = 4096, .fallback = "256",
	  .offset = OFF(size), .help = "stored image side in pixels" },
	{ "--shards", .type = SETTING_LONG, .commands = 1, .lo = 1, .hi = 1 << 20,
	  .offset = OFF(shards), .help = "training shards (default: one per 8192 images)" },
	{ "--val-fraction", .type = SETTING_DOUBLE, .commands = 1, .lo = 0, .hi = 0.99,
	  .fallback = "0.1", .offset = OFF(val_fraction),
	  .help = "patients of the training list kept for validation" },
	{ "--threads", .type = SETTING_LONG, .commands = 1, .lo = 1, .hi = 256,
	  .offset = OFF(threads), .help = "decode threads (default: allowed CPUs)" },
	{ "--views", .type = SETTING_TEXT, .commands = 1, .offset = OFF(views),
	  .help = "comma list of views kept, e.g. PA,AP (default: all)" },
	{ "--skip-unreadable", .type = SETTING_SWITCH, .commands = 1, .on = 1,
	  .offset = OFF(skip_unreadable),
	  .help = "pass over unreadable images (listed in OUT/skipped.txt)" },
	{ "--max-pixels", .type = SETTING_LONG, .commands = 1, .lo = (double)DICOM_MAX_PIXELS_LOWEST,
	  .hi = (double)DICOM_MAX_PIXELS_HIGHEST, .offset = OFF(max_pixels),
	  .help = "largest DICOM image read, in pixels (default 67108864)" },
	{ "--preview", .type = SETTING_LONG, .commands = 1, .lo = 1, .hi = 100000,
	  .offset = OFF(preview), .help = "instead of packing: N images as stored, into PREVIEW_DIR" },
	{ "--help", .type = SETTING_HELP, .commands = 1, .help = "this help" },
};
#undef OFF

const struct option_table pack_options = {
	.rows = pack_rows, .count = sizeof(pack_rows) / sizeof(pack_rows[0]),
};

/* argv into cfg (and *preview_dir with --preview); 0, 1 (help printed)
 * or -1 (a line printed). */
static int pack_parse(int argc, char **argv, struct pack_config *cfg, long *preview,
		      const char **preview_dir)
{
	struct pack_options o = { 0 };
	struct trainer_error e = { "" };
	char err[2048];
	char **operands = calloc((size_t)argc, sizeof(char *));
	int n = 0;

	if (!operands || option_defaults(&pack_options, 1, &o, &e)) {
		fprintf(stderr, "chexnet: pack: %s\n", operands ? e.msg : "out of memory");
		free(operands);
		return -1;
	}
	int rc = option_parse(&pack_options, 1, " [PREVIEW_DIR]", argc, argv, &o, operands, &n);
	*preview_dir = n == 1 ? operands[0] : NULL;
	free(operands);
	if (rc)
		return rc;
	if (n != (o.preview ? 1 : 0))
		return fprintf(stderr, "chexnet: pack: %s\n", o.preview ? "--preview N needs one "
			       "PREVIEW_DIR" : "one argument without an option: only after --preview N"),
		       -1;
	if ((o.views && data_views_parse(o.views, &cfg->views, err, sizeof(err))) ||
	    (o.max_pixels && dicom_budget_set((uint64_t)o.max_pixels, err, sizeof(err))))
		return fprintf(stderr, "%s\n", err), -1;
	cfg->data_dir = o.data;
	cfg->out_dir = o.out;
	cfg->size = (int)o.size;
	cfg->shards = (int)o.shards;
	cfg->threads = (int)o.threads;
	cfg->val_fraction = o.val_fraction;
	cfg->skip_unreadable = o.skip_unreadable;
	*preview = o.preview;
	return 0;
}

int cmd_pack(int argc, char **argv)
{
	struct pack_config cfg = { 0 };
	struct progress_state ps = { .tty = isatty(2), .last_decile = -1 };
	struct pack_result res;
	char err[2048];
	const char *preview_dir = NULL;
	long preview_n = 0;
	int rc = pack_parse(argc, argv, &cfg, &preview_n, &preview_dir);

	if (rc)
		return rc < 0 ? 2 : 0;
	if (cfg.data_dir && preview_dir)
		return run_preview(&cfg, (size_t)preview_n, preview_dir);
	if (!cfg.data_dir || !cfg.out_dir) {
		fprintf(stderr, "chexnet: pack: --data and --out are required (or --data and --preview "
			"N PREVIEW_DIR; chexnet pack --help)\n");
		return 2;
	}
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
