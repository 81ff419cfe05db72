/* code_lines.h - counts the lines of C code below a folder as cloc does:
 * a line counts when it holds anything outside comments and blanks (a
 * line of code with a trailing comment counts; a comment line does not).
 * For the layout group's budget of runtime/ (issue text: HACKING.md).
 * What it does not do: parse C; string literals are skipped so that
 * a comment marker inside one is not taken for a comment.
 */
#ifndef HVD_TEST_CODE_LINES_H
#define HVD_TEST_CODE_LINES_H

/* Code lines of the .c and .h files below dir, leaving out the folder
 * skip (relative to dir, NULL for none); -1 if dir cannot be read. */
long code_lines(const char *dir, const char *skip);
/* Code lines of one text. */
long code_lines_of(const char *text);

#endif
