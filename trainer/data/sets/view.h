/* view.h - an X-ray's view (projection) as a small code: from the NIH
 * CSV's `View Position` column or DICOM (0018,5101), stored per record in
 * shards (version 2), and the `--views PA,AP` filter of `chexnet pack`.
 * Codes: 0 unknown (PNG without a CSV view, packs of version 1), 1 PA,
 * 2 AP, 3 LL, 4 RL, 5 any other value.
 * What this is not: reading the files that carry the view.
 */
#ifndef HVD_TRAINER_DATA_VIEW_H
#define HVD_TRAINER_DATA_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "data/sets/set.h"

enum { DATA_VIEW_UNKNOWN, DATA_VIEW_PA, DATA_VIEW_AP, DATA_VIEW_LL, DATA_VIEW_RL, DATA_VIEW_OTHER,
       DATA_VIEW_CODES };

/* The code of a view string ("" -> unknown; case as written). */
uint8_t data_view_code(const char *view);
const char *data_view_name(int code);   /* "unknown", "PA", ... "OTHER" */

/* A comma-separated list of PA, AP, LL, RL, OTHER into a mask of codes
 * (bit c = code c). Returns 0, or -1 with a one-line message in err. */
int data_views_parse(const char *list, unsigned *mask, char *err, size_t err_bytes);

/* Keeps only the entries of every split whose view is in mask; returns
 * how many are left. */
size_t data_set_keep_views(struct data_set *set, unsigned mask);

#endif
