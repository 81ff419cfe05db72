/* cmd/curves.h - `chexnet curves` (cmd/curves.c), dispatched by main.c
 * with its own arguments. What this is not: the drawing (curves_png.h).
 */
#ifndef HVD_TRAINER_CMD_CURVES_H
#define HVD_TRAINER_CMD_CURVES_H

/* argv[0] is "curves"; returns the exit status (0, 1 failure, 2 usage). */
int run_curves(int argc, char **argv);

#endif
