/* symbol_cycles.h - cycles among a static library's members, or among
 * listed object files, judged by their symbols (symbol_cycles.c). What this is not: a test case (those
 * are in test_layout.c).
 */
#ifndef HVD_TESTS_SYMBOL_CYCLES_H
#define HVD_TESTS_SYMBOL_CYCLES_H

#include <stddef.h>

/* Reads the archive with nm. Returns the number of cycles (one line each
 * in report: "layout: symbol cycle: a -(sym)-> b -(sym)-> a"), or -1 when
 * nm fails or the archive has no member. */
int symbol_cycles(const char *archive, char *report, size_t len);

/* The same for the object files list names, one path a line (members
 * named by their path after "obj/", without .o). -1 when a file is
 * missing or the list is empty. */
int symbol_cycles_of_list(const char *list, char *report, size_t len);

#endif
