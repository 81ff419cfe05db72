/* data/sets/split.h - the patient-wise validation split: whole patients of
 * train_val go to val until val holds val_fraction of its images, so no
 * patient is in two splits. Patients are taken in an order given by a fixed
 * hash of their id (the same split on every machine and every run).
 * Pure: no I/O. What this is not: the train_val/test split (NIH's lists).
 */
#ifndef HVD_TRAINER_DATA_SPLIT_H
#define HVD_TRAINER_DATA_SPLIT_H

#include "data/sets/set.h"

/* Moves entries of *train into *val (both keep their relative order).
 * Returns 0, or -1 when out of memory. */
int data_split_by_patient(struct data_list *train, struct data_list *val,
			  double val_fraction);

/* Mixing function used for ordering (splitmix64 finaliser). */
uint64_t data_hash64(uint64_t x);

#endif
