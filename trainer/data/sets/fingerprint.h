/* data/sets/fingerprint.h - a fingerprint of a data directory's content as the
 * run record keeps it: "crc32c:XXXXXXXX" over the files that define the
 * records and their labels, in a fixed order, each as its name, its size
 * and its bytes: a pack's index.txt (its shards carry their own CRCs), or
 * a folder's label and list files (NIH Data_Entry CSV and lists, generic
 * train/val/test.csv) and its key (data/sets/split_key.h, made here when
 * a folder has none: the key decides the val split). Two directories with the same such files have the
 * same fingerprint; images are not read (a pack's shard CRCs cover them).
 * What this is not: a check that the data is readable (the loader).
 */
#ifndef HVD_TRAINER_DATA_FINGERPRINT_H
#define HVD_TRAINER_DATA_FINGERPRINT_H

#include <stddef.h>

/* 0 and out = "crc32c:1a2b3c4d", or -1 with a one-line message in err
 * (none of the files, or one unreadable). */
int data_fingerprint(const char *dir, char *out, size_t out_len, char *err, size_t err_len);

/* 1 when dir holds index.txt or a label or list file (what a fingerprint
 * needs), else 0. Makes nothing: the check before start-up. */
int data_has_record_file(const char *dir);

#endif
