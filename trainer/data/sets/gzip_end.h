/* data/sets/gzip_end.h - zlib's gzread stops quietly at the end of the last
 * gzip member and ignores whatever follows; a CSV.gz followed by other
 * bytes (a second file appended, a copy gone wrong) must be an error. This
 * walks the members of a gzip file and checks each is followed by another
 * member or by the end of the file.
 * What it does not do: return the data (data/sets/csv.c reads it).
 */
#ifndef HVD_TRAINER_DATA_GZIP_END_H
#define HVD_TRAINER_DATA_GZIP_END_H

#include <stddef.h>

/* 0 when path is not gzip or is a sequence of complete gzip members only;
 * -1 with `chexnet: 'path': offset N: reason` in err. A member cut short
 * is left to the reader (it names the line). */
int data_gzip_check_end(const char *path, char *err, size_t err_bytes);

#endif
