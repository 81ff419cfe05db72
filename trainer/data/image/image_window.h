/* image_window.h - high-bit-depth gray values to 8 bits through the
 * 0.5-99.5 percentile window of the image's own values. Shared by every
 * decoder of more than 8 bits (16-bit PNG in image_decode.c), so they give
 * the same 8-bit image for the same values.
 *
 * Percentiles are order statistics, no interpolation: with the N values
 * sorted, lo = v[floor(0.005 (N-1))] and hi = v[ceil(0.995 (N-1))] (numpy's
 * percentile with method 'lower' and 'higher'). A value maps to
 * round(255 (v - lo) / (hi - lo)) clamped to 0..255; hi == lo maps every
 * value to 0.
 * What this is not: a choice of window (the callers make it) or resizing.
 */
#ifndef HVD_TRAINER_IMAGE_WINDOW_H
#define HVD_TRAINER_IMAGE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

/* Order-statistic ranks of the window for n values. */
size_t image_window_lo_rank(size_t n);
size_t image_window_hi_rank(size_t n);

/* The window of n 16-bit values (a histogram, O(n)). */
void image_window_u16(const uint16_t *v, size_t n, uint16_t *lo, uint16_t *hi);

/* out[i] = round(255 (v[i] - lo) / (hi - lo)), clamped; exact integers. */
void image_window_apply_u16(const uint16_t *v, size_t n, uint32_t lo, uint32_t hi,
			    uint8_t *out);

/* The window of n doubles (selection on a copy, O(n)); -1 if out of memory. */
int image_window_f64(const double *v, size_t n, double *lo, double *hi);

#endif
