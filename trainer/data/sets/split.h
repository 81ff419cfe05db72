/* data/sets/split.h - the patient-wise validation split: a patient of
 * train_val is in val when SipHash-2-4 of its number under the data set's
 * key (data/sets/split_key.h), as a number in [0, 1), is below
 * val_fraction. So a patient's split depends on its id and the key only:
 * adding or removing other images or patients never moves it, and no
 * patient is in two splits. val holds about val_fraction of the patients
 * (not exactly; of the images only on average). The seed (--seed) plays
 * no part. Pure: no I/O. What this is not: the train_val/test split
 * (NIH's lists, the generic CSVs) or the key file.
 */
#ifndef HVD_TRAINER_DATA_SPLIT_H
#define HVD_TRAINER_DATA_SPLIT_H

#include <stdint.h>

#include "data/sets/set.h"

/* Whether patient goes to val under key. */
int data_split_is_val(const uint8_t key[16], uint32_t patient, double val_fraction);

/* Moves the entries of *train whose patient is in val to *val (both keep
 * their relative order). Returns 0, or -1 when out of memory. */
int data_split_by_patient(struct data_list *train, struct data_list *val, const uint8_t key[16],
			  double val_fraction);

/* Mixing function used for ordering (splitmix64 finaliser). */
uint64_t data_hash64(uint64_t x);

#endif
