/* data/sets/fingerprint.c - a data directory's fingerprint (fingerprint.h).
 * What it does not do: parse the files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "data/sets/fingerprint.h"
#include "data/sets/split_key.h"

static const char *const files[] = {
	"index.txt", "Data_Entry_2017_v2020.csv", "Data_Entry_2017.csv",
	"Data_Entry_2017_v2020.csv.gz", "Data_Entry_2017.csv.gz", "train_val_list.txt",
	"test_list.txt", "train.csv", "val.csv", "test.csv", DATA_KEY_FILE, NULL,
};

/* Adds name, size and bytes of dir/name; 1 added, 0 absent, -1 error. */
static int add_file(const char *dir, const char *name, uint32_t *crc, char *err, size_t err_len)
{
	char path[4200], buf[65536];
	FILE *f;
	uint64_t size = 0;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "rb"))) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, err_len, "chexnet: data fingerprint: '%s': %s", path, strerror(errno));
		return -1;
	}
	*crc = crc32c(*crc, name, strlen(name) + 1);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		*crc = crc32c(*crc, buf, n);
		size += n;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, err_len, "chexnet: data fingerprint: '%s': read error", path);
		return -1;
	}
	*crc = crc32c(*crc, &size, sizeof(size));
	return 1;
}

/* A folder (label files, no index.txt): its key, made now if it has none,
 * so the first run's fingerprint is the one a resume sees. */
static int folder_key(const char *dir, char *err, size_t err_len)
{
	char path[4200];
	uint8_t key[16];
	int labels = 0;

	snprintf(path, sizeof(path), "%s/index.txt", dir);
	if (access(path, F_OK) == 0)
		return 0;
	for (int i = 1; files[i] && strcmp(files[i], DATA_KEY_FILE); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		labels |= access(path, F_OK) == 0;
	}
	return labels ? data_split_key(dir, key, err, err_len) : 0;
}

int data_has_record_file(const char *dir)
{
	char path[4200];
	for (int i = 0; files[i] && strcmp(files[i], DATA_KEY_FILE); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
}

int data_fingerprint(const char *dir, char *out, size_t out_len, char *err, size_t err_len)
{
	uint32_t crc = 0;
	int found = 0;

	if (folder_key(dir, err, err_len))
		return -1;
	for (int i = 0; files[i]; i++) {
		int rc = add_file(dir, files[i], &crc, err, err_len);
		if (rc < 0)
			return -1;
		found += rc;
	}
	if (!found) {
		snprintf(err, err_len, "chexnet: data fingerprint: '%s': no index.txt, label or list "
			 "file", dir);
		return -1;
	}
	snprintf(out, out_len, "crc32c:%08" PRIx32, crc);
	return 0;
}
