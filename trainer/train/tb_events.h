/* train/tb_events.h - TensorBoard event files, written and read in C.
 * A file is a sequence of records: uint64 length (little-endian), uint32
 * masked CRC-32C of those 8 bytes, `length` bytes of a serialized
 * tensorflow.Event protobuf, uint32 masked CRC-32C of them (masked:
 * ((crc >> 15) | (crc << 17)) + 0xa282ead8). The Event fields used:
 * wall_time (1, double), step (2, int64), file_version (3, string,
 * "brain.Event:2" in the first record), summary (5: repeated Value (1):
 * tag (1, string), simple_value (2, float)) and session_log (7: status
 * (1) START = 1; TensorBoard drops the points at or after a START's step
 * that came before it: a resumed run's orphaned steps). Files are named
 * events.out.tfevents.SECONDS.HOST.PID so that a newer file sorts last.
 * Reading checks every length and CRC and decodes those fields (others
 * skipped by wire type); a truncated or corrupt file is one line naming
 * the file and the record.
 * What this is not: which series are written (loop/run_metrics.h).
 */
#ifndef HVD_TRAINER_TB_EVENTS_H
#define HVD_TRAINER_TB_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

#define TB_TAG_MAX 96
#define TB_VALUES_MAX 32

struct tb_value {
	char tag[TB_TAG_MAX];
	float value;
};

struct tb_event {
	double wall_time;
	int64_t step;
	int file_version;        /* 1: the record holds file_version */
	int session_start;       /* 1: a SessionLog START */
	int count;               /* summary values */
	struct tb_value values[TB_VALUES_MAX];
};

/* A new file in dir (created when missing), named after every file
 * there; its first record is the file_version. NULL + err. */
FILE *tb_events_create(const char *dir, const char *host, char *path, size_t path_len,
		       struct trainer_error *err);
/* One record holding e (flushed). 0 or -1 (err). */
int tb_events_write(FILE *f, const struct tb_event *e, struct trainer_error *err);

/* Decodes one serialized Event; 0 or -1 with a short reason. */
int tb_event_decode(const uint8_t *p, size_t len, struct tb_event *e, const char **why);
/* Reads every record of path, calling each (may be NULL) per event; 0 or
 * -1 (err names the file and the record's offset). */
int tb_events_read(const char *path, int (*each)(const struct tb_event *e, void *user),
		   void *user, struct trainer_error *err);

/* Where a file's complete records end: a short write (a full disk, a
 * node dying mid-append) leaves the last record cut short. */
struct tb_tear {
	int torn;                /* 1: the last record was cut short */
	size_t complete;         /* bytes of whole records */
	size_t size;             /* the file's size */
};
/* tb_events_read, except that a last record cut short (its header, or its
 * data after a length whose CRC holds), or an empty file, is not an
 * error: tear->torn is then 1 and tear->complete where that record starts
 * (0: no whole record). A CRC mismatch, an oversized record or a bad
 * first record is still -1. */
int tb_events_read_torn(const char *path, int (*each)(const struct tb_event *e, void *user),
			void *user, struct tb_tear *tear, struct trainer_error *err);

#endif
