/* xmlfile.h - HWLOC_XMLFILE judged before hwloc reads it (xmlfile.c):
 * hwloc 2.x silently discovers this machine instead when the file is
 * unreadable or not XML, so hvd-check would pass against the wrong one. */
#ifndef HVD_CHECK_XMLFILE_H
#define HVD_CHECK_XMLFILE_H

#include <stddef.h>

/* 0 when path is a readable, non-empty file whose first non-blank text
 * is XML ('<') of an hwloc XML version this hwloc reads; -1 with why
 * ("unreadable: ...", "empty", "not XML", "hwloc XML version 3.0, this
 * hwloc 2.9.0 reads up to 2.x"). */
int check_xmlfile(const char *path, char *why, size_t len);

#endif
