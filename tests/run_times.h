/* run_times.h - where a run of the suite spends its time: after each
 * group, where the run stands (`group N/M, elapsed m:ss, about m:ss
 * left`: on a terminal a live line redrawn after every case, else on the
 * group's own line), at the end the ten slowest groups, and the file
 * BUILD/check-times that the next run's estimate starts from (one
 * `SECONDS NAME` line per group; a group it does not know is counted at
 * the mean of the groups run so far).
 * What it does not do: run or time cases (runner.c), or decide anything
 * from a time: a slow group is reported, never failed.
 */
#ifndef HVD_TESTS_RUN_TIMES_H
#define HVD_TESTS_RUN_TIMES_H

/* The run's groups, in order (names are kept, not copied), and where the
 * times file is. */
void run_times_begin(const char *build, const char *const *names, int count);

/* On a terminal: the live line, drawn again (after a case), or erased
 * before other output. No-ops otherwise. */
void run_times_draw(void);
void run_times_erase(void);

/* A group starts in line, or starts beside the others (in a child
 * runner: its remaining time overlaps theirs, so it leaves the estimate). */
void run_times_group_start(const char *name);
void run_times_beside(const char *name);

/* A group ended: its seconds, and " (group N/M, ...)" for its line, N
 * being how many have ended. */
void run_times_group_done(const char *name, double seconds, char *where, int where_len);

/* The ten slowest groups, one line each; the times file written when the
 * run ran every group (a selection's times would replace a whole run's). */
void run_times_finish(int whole_run);

#endif
