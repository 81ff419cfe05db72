/* data/synth/synth.h - a generated ChestX-ray14 look-alike (`chexnet synth`): NIH
 * layout (PNGs in images/, Data_Entry_2017_v2020.csv, train_val_list.txt,
 * test_list.txt split by patient) whose images carry label-dependent
 * structure a CNN can learn, on a lung-like background with noise.
 *
 * Label c is positive with probability max(real frequency of c, floor):
 * the real CSV's order, but every class common enough (default 5%) to have
 * positives in a small test split. Everything is a pure function of
 * (seed, image number): the same data set on every machine.
 * What this is not: a model of real radiology.
 */
#ifndef HVD_TRAINER_DATA_SYNTH_H
#define HVD_TRAINER_DATA_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "base/batch.h"

/* Positives per class in the real Data_Entry_2017_v2020.csv (112,120 rows). */
extern const unsigned data_synth_real_counts[CHEXNET_CLASSES];
#define DATA_SYNTH_REAL_ROWS 112120u

struct synth_config {
	const char *out_dir;
	size_t count;               /* images */
	int size;                   /* side of the PNGs */
	uint64_t seed;
	double floor;               /* minimum class frequency, e.g. 0.05 */
	int threads;                /* 0 = all allowed CPUs */
};

/* Label mask of image i. Pure. */
uint16_t data_synth_labels(uint64_t seed, size_t i, double floor);

/* Draws image i with the given labels into pixels (size x size). Pure. */
void data_synth_image(uint64_t seed, size_t i, uint16_t labels, int size, uint8_t *pixels);

/* Where finding c is drawn in image i: mask (size x size) is 1 where the
 * picture with the finding and the same picture without it (noise aside)
 * differ by more than DATA_SYNTH_MASK_LEVEL grey levels. Pure. */
#define DATA_SYNTH_MASK_LEVEL 8.0
void data_synth_finding_mask(uint64_t seed, size_t i, uint16_t labels, int finding, int size,
			     uint8_t *mask);

/* The marker of a folder synth made (base/own_dir.h): synth writes only
 * into a new or empty folder, or one holding this file with exactly this
 * text; anything else is refused in one line naming --out. */
#define SYNTH_MARKER ".chexnet-synth"
#define SYNTH_MARKER_TEXT "chexnet synth made this folder; a new synth here replaces its " \
	"images/, Data_Entry_2017_v2020.csv, train_val_list.txt, test_list.txt and " \
	"chexnet-key.txt\n"

/* Writes the whole data set. Returns 0 or -1 with a message in err. */
int data_synth(const struct synth_config *cfg, char *err, size_t err_bytes);

#endif
