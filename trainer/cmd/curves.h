/* cmd/curves.h - `chexnet curves` (cmd/curves.c), dispatched by main.c
 * with its own arguments. What this is not: the drawing (curves_png.h).
 */
#ifndef HVD_TRAINER_CMD_CURVES_H
#define HVD_TRAINER_CMD_CURVES_H

#include "base/option_table.h"

/* argv[0] is "curves"; returns the exit status (0, 1 failure, 2 usage). */
int run_curves(int argc, char **argv);
/* Its options (command bit 1), for its help and the tests. */
extern const struct option_table curves_options;

#endif
