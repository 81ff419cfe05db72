/* data/sets/csv.h - reads CSV (RFC 4180 quoting) and plain list files line by
 * line, gzip-compressed or not (zlib reads both), counting lines so every
 * error names file and line; a UTF-8 byte-order mark at the start of the
 * file (spreadsheet programs write one) is skipped. What this is not: the
 * meaning of any column (data/sets/nih.c, data/sets/generic.c).
 */
#ifndef HVD_TRAINER_DATA_CSV_H
#define HVD_TRAINER_DATA_CSV_H

#include <stddef.h>

#define CSV_MAX_FIELDS 32
#define CSV_LINE_BYTES 8192

struct csv_reader {
	void *gz;                   /* gzFile */
	char path[4096];
	long line;                  /* 1-based number of the last line read */
	char buf[CSV_LINE_BYTES];
	char *fields[CSV_MAX_FIELDS];
	int count;                  /* fields in the last line */
};

/* Opens path. Returns 0, or -1 with a message in err. */
int csv_open(struct csv_reader *r, const char *path, char *err, size_t err_bytes);

/* Reads the next non-empty line and splits it at commas (quotes honoured,
 * trailing CR dropped). Returns 1, 0 at end of file, -1 with a message
 * naming file and line (line too long, unterminated quote, read error). */
int csv_next(struct csv_reader *r, char *err, size_t err_bytes);

/* Reads the next non-empty line whole, without splitting (list files). */
int csv_next_raw(struct csv_reader *r, char *err, size_t err_bytes);

void csv_close(struct csv_reader *r);

/* A reader on the heap (struct csv_reader holds an 8 KiB line): malloc +
 * csv_open, NULL with a message in err. csv_free closes and frees (NULL is
 * fine). */
struct csv_reader *csv_open_new(const char *path, char *err, size_t err_bytes);
void csv_free(struct csv_reader *r);

/* Splits line in place. Returns the field count, or -1 for an
 * unterminated quote or more than max fields. Pure. */
int csv_split(char *line, char **fields, int max);

#endif
