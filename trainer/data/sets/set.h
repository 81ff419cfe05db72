/* data/sets/set.h - a labelled image collection split into train/val/test:
 * what `chexnet pack` packs and the loader's direct mode reads.
 *
 * Two layouts are recognised in a directory:
 *  - NIH ChestX-ray14: Data_Entry_2017.csv or Data_Entry_2017_v2020.csv
 *    (optionally .gz; 11 fields, or 12 with the 2017 file's trailing empty
 *    one), train_val_list.txt, test_list.txt, images in images/,
 *    images_001/images ... images_012/images, or the directory itself.
 *  - Generic: train.csv, test.csv and optionally val.csv, header
 *    `path,<the 14 class names in CheXNet order>[,patient]`, rows with 0/1
 *    labels; paths relative to the directory.
 * val, when not given as a list, is taken from train_val by patient
 * (data/sets/split.h). In the generic layout, DICOM images' patients come from
 * their Patient IDs (data/sets/patient.h) before that split. Records keep the order of the list files.
 * What this is not: entry lists (list.h), decoding images or the shard
 * format.
 */
#ifndef HVD_TRAINER_DATA_SET_H
#define HVD_TRAINER_DATA_SET_H

#include <stddef.h>
#include <stdint.h>

#include "data/sets/list.h"

#define DATA_MAX_IMAGE_DIRS 16

struct data_set {
	struct data_list split[3];  /* enum data_split: train, val, test */
	char root[4096];
	int image_dir_count;        /* where images are looked for, in order */
	char image_dirs[DATA_MAX_IMAGE_DIRS][4200];
	size_t dicom_images;        /* DICOM files among the images (generic layout) */
	char dicom_other_example[20];   /* a modality other than CR, DX, DR seen, or "" */
	uint8_t patient_key[16];    /* the set's key (data/sets/split_key.h): patients, split */
};

/* Reads dir (either layout, picked by layout.c). val_fraction in [0, 1):
 * share of train_val images (whole patients) moved to val. Returns 0, or
 * -1 with a one-line message naming file and line in err. */
int data_set_open(struct data_set *set, const char *dir, double val_fraction,
		  char *err, size_t err_bytes);

/* NIH label file alone (all rows, no lists): entries in file order. */
int data_nih_read_entries(const char *csv_path, struct data_list *out,
			  char *err, size_t err_bytes);

/* Full path of e's image (first image dir that has it), or -1 with
 * `chexnet: image 'name': not found in ...` in err. */
int data_set_image_path(const struct data_set *set, const struct data_entry *e,
			char *path, size_t path_bytes, char *err, size_t err_bytes);

void data_set_free(struct data_set *set);

/* Internal to layout.c, nih.c and generic.c. */
int data_nih_open(struct data_set *set, const char *dir, double val_fraction,
		  char *err, size_t err_bytes);
int data_generic_open(struct data_set *set, const char *dir, double val_fraction,
		      char *err, size_t err_bytes);

#endif
