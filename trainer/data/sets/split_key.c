/* data/sets/split_key.c - a data set's key file (split_key.h).
 * What it does not do: hash patients or split them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "data/sets/split_key.h"

void data_key_hex(const uint8_t key[16], char hex[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
}

int data_key_parse(const char *hex, uint8_t key[16])
{
	if (strlen(hex) != 32 || strspn(hex, "0123456789abcdef") != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		char byte[3] = { hex[2 * i], hex[2 * i + 1], 0 };
		key[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	return 0;
}

/* 1 read, 0 absent, -1 error. */
static int read_key(const char *path, uint8_t key[16], char *err, size_t err_bytes)
{
	char line[64] = "";
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return snprintf(err, err_bytes, "chexnet: data key '%s': %s", path, strerror(errno)), -1;
	ssize_t n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = 0;
	if (n != 33 || data_key_parse(line, key) != 0)
		return snprintf(err, err_bytes, "chexnet: data key '%s': expected one line of 32 "
				"lowercase hex digits (delete it for a new key: a new split)", path), -1;
	return 1;
}

/* Writes key to a temporary file and links it to path; EEXIST: kept. */
static int write_key(const char *path, const uint8_t key[16], char *err, size_t err_bytes)
{
	char tmp[4300], hex[33];
	/* pid and key bytes: makers on two hosts of a shared folder differ */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%02x%02x%02x%02x", path, (long)getpid(), key[0], key[1],
		 key[2], key[3]);
	data_key_hex(key, hex);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return snprintf(err, err_bytes, "chexnet: data key '%s': cannot make it: %s (the key is "
				"made once per data set: make the folder writable once, or copy its key "
				"file there)", path, strerror(errno)), -1;
	hex[32] = '\n';
	int bad = write(fd, hex, 33) != 33 || fsync(fd) != 0;
	bad |= close(fd) != 0;
	if (!bad && link(tmp, path) != 0 && errno != EEXIST)
		bad = 1;
	int saved = errno;
	unlink(tmp);
	if (bad)
		return snprintf(err, err_bytes, "chexnet: data key '%s': %s", path, strerror(saved)), -1;
	return 0;
}

int data_split_key_write(const char *dir, const uint8_t key[16], char *err, size_t err_bytes)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, DATA_KEY_FILE);
	return write_key(path, key, err, err_bytes);
}

int data_split_key(const char *dir, uint8_t key[16], char *err, size_t err_bytes)
{
	char path[4200];
	uint8_t fresh[16];
	snprintf(path, sizeof(path), "%s/%s", dir, DATA_KEY_FILE);
	int rc = read_key(path, key, err, err_bytes);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (getrandom(fresh, sizeof(fresh), 0) != (ssize_t)sizeof(fresh))
		return snprintf(err, err_bytes, "chexnet: data key '%s': getrandom: %s", path,
				strerror(errno)), -1;
	if (write_key(path, fresh, err, err_bytes) != 0)
		return -1;
	return read_key(path, key, err, err_bytes) == 1 ? 0 : -1;   /* ours, or the first one's */
}
