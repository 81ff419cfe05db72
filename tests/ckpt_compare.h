/* ckpt_compare.h - learnable-parameter comparison of two test checkpoints. */
#ifndef HVD_TESTS_CKPT_COMPARE_H
#define HVD_TESTS_CKPT_COMPARE_H

/* max |a - b| / max(1, |b|) over the learnable parameters (F32 tensors but
 * BN running statistics) of tmpdir/A_DIR/last and tmpdir/B_DIR/last, or -1
 * when unreadable; a count mismatch is a recorded failure. */
double ckpt_max_rel_diff(const char *a_dir, const char *b_dir);
/* The same over the BN running statistics (running_mean, running_var). */
double ckpt_max_rel_diff_bn(const char *a_dir, const char *b_dir);

#endif
