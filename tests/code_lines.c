/* code_lines.c - see code_lines.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "code_lines.h"
#include "runner.h"

long code_lines_of(const char *t)
{
	long lines = 0;
	int comment = 0, code = 0;
	for (const char *p = t; *p; p++) {
		if (*p == '\n') {
			lines += code;
			code = 0;
		} else if (comment) {
			if (p[0] == '*' && p[1] == '/')
				comment = 0, p++;
		} else if (p[0] == '/' && p[1] == '*') {
			comment = 1, p++;
		} else if (p[0] == '/' && p[1] == '/') {
			while (p[1] && p[1] != '\n')
				p++;
		} else if (*p == '"' || *p == '\'') {
			code = 1;
			for (char q = *p++; *p && *p != q && *p != '\n'; p++)
				p += p[0] == '\\' && p[1];
			if (!*p)
				break;
		} else if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\f') {
			code = 1;
		}
	}
	return lines + code;
}

long code_lines(const char *dir, const char *skip)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	long total = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || (skip && !strcmp(e->d_name, skip)))
			continue;
		char *path = test_path(dir, e->d_name);
		struct stat st;
		size_t len = strlen(e->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
			total += code_lines(path, NULL);
		} else if (len > 2 && (!strcmp(e->d_name + len - 2, ".c") ||
				       !strcmp(e->d_name + len - 2, ".h"))) {
			char *text = test_read_file(path, NULL);
			total += text ? code_lines_of(text) : 0;
			free(text);
		}
		free(path);
	}
	closedir(d);
	return total;
}
