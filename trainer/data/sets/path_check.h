/* data/sets/path_check.h - whether an image path read from a data set's CSV or
 * list stays inside the data directory: relative, no `.` or `..`
 * component, no empty component. A data set must not name files outside
 * its folder (`../../etc/passwd`, `/etc/passwd`).
 * What it does not do: resolve symbolic links the data set's owner made.
 */
#ifndef HVD_TRAINER_DATA_PATH_CHECK_H
#define HVD_TRAINER_DATA_PATH_CHECK_H

/* NULL when path is acceptable, else the reason (a static string). Pure. */
const char *data_path_check(const char *path);

#endif
