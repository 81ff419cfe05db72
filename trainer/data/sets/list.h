/* list.h - one image's record (name, patient, labels) and a growing list
 * of them, filled from a label table (NIH Data_Entry, generic CSV) row by
 * row. What this is not: a data set's layout or files (set.h).
 */
#ifndef HVD_TRAINER_DATA_LIST_H
#define HVD_TRAINER_DATA_LIST_H

#include <stddef.h>
#include <stdint.h>

#define DATA_NAME_BYTES 160   /* image name or relative path, NUL included */

struct data_entry {
	char name[DATA_NAME_BYTES];
	uint32_t patient;           /* patient id (generic CSV without one: row number) */
	uint16_t labels;            /* bit c = class c (data/sets/labels.h) */
	uint8_t view;               /* data/sets/view.h code; 0 unknown */
	uint8_t unreadable;         /* pack --skip-unreadable: refused, left out */
	uint8_t other_modality;     /* DICOM, not CR, DX or DR (CT, MR, ...) */
};

struct data_list {
	struct data_entry *items;
	size_t count, capacity;
};

/* List helpers. */
struct data_entry *data_list_push(struct data_list *l);   /* NULL: no memory */
void data_list_free(struct data_list *l);

/* A label table (NIH Data_Entry, generic CSV): header() checks the first
 * line, row() fills one entry per further line; both return 0 or -1 with a
 * message naming file and line. An empty file is an error. Appends to out. */
struct csv_reader;
typedef int (*data_header_fn)(const struct csv_reader *r, void *ctx, char *err, size_t err_bytes);
typedef int (*data_row_fn)(const struct csv_reader *r, void *ctx, struct data_entry *e,
			   char *err, size_t err_bytes);
int data_list_read_table(const char *path, data_header_fn header, data_row_fn row, void *ctx,
			 struct data_list *out, char *err, size_t err_bytes);

#endif
