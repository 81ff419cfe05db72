/* core/csv_list.h - lists of names in one string, "a,b,c" (addresses,
 * interfaces): whether one is listed, entry by entry, and appending one.
 * What this is not: a parser of quoted or escaped fields.
 */
#ifndef HVD_CSV_LIST_H
#define HVD_CSV_LIST_H

#include <stddef.h>

/* Whether list holds s (its first n bytes) as a whole entry. */
int csv_listed(const char *list, const char *s, size_t n);
/* Appends s to out (len bytes) unless listed or it does not fit: 1 when
 * appended. */
int csv_append(char *out, size_t len, const char *s);

#endif
