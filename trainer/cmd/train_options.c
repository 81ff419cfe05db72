/* cmd/train_options.c - see train_options.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/eval_command.h"
#include "cmd/resume_defaults.h"
#include "cmd/train_options.h"

/* --resume DIR continues in DIR: --out, when given, must name it. */
static int resume_dir_check(const struct settings *o)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (o->train.overwrite && o->train.resume) {
		fprintf(stderr, "chexnet: train: --overwrite and --resume: give one\n");
		return 2;
	}
	if (o->train.allow_changes && !o->train.resume) {
		fprintf(stderr, "chexnet: train: --allow-changes: only with --resume\n");
		return 2;
	}
	if (!o->train.resume || !o->train.out)
		return 0;
	if (realpath(o->train.out, a) && realpath(o->train.resume, b) && strcmp(a, b) == 0)
		return 0;
	fprintf(stderr, "chexnet: train: --out '%s': differs from --resume '%s': a resumed run "
		"continues in its own directory (leave --out out)\n", o->train.out, o->train.resume);
	return 2;
}

int train_options_check(struct settings *o)
{
	int usage = resume_dir_check(o);

	if (usage)
		return usage;
	if (!o->train.out)
		o->train.out = o->train.resume;
	if (o->train.resume && (usage = resume_defaults(o)))
		return usage;
	if (!o->train.data.dir == !o->synthetic) {
		fprintf(stderr, "chexnet: train: need exactly one of --data DIR and --synthetic\n");
		return 2;
	}
	usage = eval_options_check(o);
	if (usage)
		return usage;
	if (o->train.init && o->train.resume) {
		fprintf(stderr, "chexnet: train: --init and --resume: give one (a resumed run has its weights)\n");
		return 2;
	}
	if (o->train.init && access(o->train.init, R_OK) != 0) {
		fprintf(stderr, "chexnet: train: --init '%s': %s\n", o->train.init, strerror(errno));
		return 2;
	}
	struct stat sb;
	if (o->train.resume && (stat(o->train.resume, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
		fprintf(stderr, "chexnet: train: --resume '%s': not a run folder (no %s/last to "
			"continue from)\n", o->train.resume, o->train.resume);
		return 2;
	}
	return 0;
}
