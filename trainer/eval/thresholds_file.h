/* eval/thresholds_file.h - the operating thresholds stored with a checkpoint:
 * CHECKPOINT/thresholds.json (for a checkpoint given as a .safetensors
 * file: FILE.thresholds.json), written by `chexnet train` (best/, from the
 * validation split at the best epoch) and by `chexnet eval --split val
 * --choose-thresholds`, read by `chexnet eval` and `chexnet predict`:
 *
 *   {"format": "chexnet-thresholds 1", "model": "densenet121",
 *    "model_crc32c": "89abcdef", "split": "val", "rule": "youden",
 *    "target": null, "thresholds": {"Atelectasis": 0.231, ... 14 names}}
 *
 * model_crc32c is the CRC32C of the checkpoint's model.safetensors: a file
 * copied next to other weights, or weights retrained under it, no longer
 * matches and is refused with the reason (never used silently).
 * What this is not: choosing thresholds (eval/thresholds.h).
 */
#ifndef HVD_TRAINER_THRESHOLDS_FILE_H
#define HVD_TRAINER_THRESHOLDS_FILE_H

#include <stddef.h>

#include "base/batch.h"
#include "base/error.h"
#include "eval/thresholds.h"

struct thresholds {
	char model[32];                   /* "densenet121" / "resnet50" */
	double value[CHEXNET_CLASSES];    /* probability >= value: positive; NAN: none */
	struct threshold_choice rule;
	char split[8];                    /* where they were chosen: "val" */
};

/* Where the file of checkpoint (a directory or a .safetensors file) is. */
void thresholds_path(const char *checkpoint, char *path, size_t bytes);

/* Writes the file (temporary name, fsync, rename). 0 or -1 + err. */
int thresholds_save(const char *checkpoint, const struct thresholds *t,
		    struct trainer_error *err);

/* 0 loaded, 1 there is no file, -1 + err: unreadable, malformed, or not
 * made for this checkpoint (model name, class names, model_crc32c). */
int thresholds_load(const char *checkpoint, const char *model, struct thresholds *t,
		    struct trainer_error *err);

#endif
