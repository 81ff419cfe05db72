/* data/sets/labels.h - the 14 CheXNet classes and the NIH "Finding Labels"
 * field ('|'-separated names, "No Finding" = all negative) as a bit mask.
 * What this is not: CSV reading (data/sets/csv.h) or class weights.
 */
#ifndef HVD_TRAINER_DATA_LABELS_H
#define HVD_TRAINER_DATA_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "base/batch.h"
#include "base/classes.h"

/* Class index of name, or -1. */
int data_class_find(const char *name, size_t len);

/* Parses "Cardiomegaly|Emphysema" / "No Finding" into *mask (bit c = class
 * c). Returns 0, or -1 with the offending token copied to bad (an unknown
 * name, an empty token, a repeated name, "No Finding" with others). */
int data_labels_parse(const char *field, uint16_t *mask, char *bad, size_t bad_bytes);

/* mask as 14 floats (0 or 1) in class order. */
void data_labels_to_floats(uint16_t mask, float *out);

#endif
