/* image_window.c - the percentile window and the linear maps to 8 bits
 * (image_window.h). Integers for 16-bit values (a histogram and exact
 * rounding), a selection on a copy for doubles.
 * What it does not do: decide which window applies (the callers do).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "data/image/image_window.h"

size_t image_window_lo_rank(size_t n)
{
	return n ? (size_t)((unsigned long long)(n - 1) * 5 / 1000) : 0;
}

size_t image_window_hi_rank(size_t n)
{
	return n ? (size_t)(((unsigned long long)(n - 1) * 995 + 999) / 1000) : 0;
}

/* The value of rank k (0-based) in a 65536-bin histogram. */
static uint16_t hist_rank(const size_t *hist, size_t k)
{
	size_t seen = 0;
	for (unsigned v = 0; v < 65536; v++) {
		seen += hist[v];
		if (seen > k)
			return (uint16_t)v;
	}
	return 65535;
}

void image_window_u16(const uint16_t *v, size_t n, uint16_t *lo, uint16_t *hi)
{
	size_t *hist = calloc(65536, sizeof(*hist));
	*lo = *hi = 0;
	if (!hist || !n) {    /* no memory: a caller checks hi > lo */
		free(hist);
		return;
	}
	for (size_t i = 0; i < n; i++)
		hist[v[i]]++;
	*lo = hist_rank(hist, image_window_lo_rank(n));
	*hi = hist_rank(hist, image_window_hi_rank(n));
	free(hist);
}

void image_window_apply_u16(const uint16_t *v, size_t n, uint32_t lo, uint32_t hi,
			    uint8_t *out)
{
	if (hi <= lo) {
		memset(out, 0, n);
		return;
	}
	uint64_t range = hi - lo;
	for (size_t i = 0; i < n; i++) {
		if (v[i] <= lo)
			out[i] = 0;
		else if (v[i] >= hi)
			out[i] = 255;
		else   /* round half up: (2 * 255 * d + range) / (2 * range) */
			out[i] = (uint8_t)((510u * (uint64_t)(v[i] - lo) + range) / (2 * range));
	}
}

/* Quickselect (Hoare partition): a[k] ends where a sorted a would hold it. */
static double select_rank(double *a, size_t n, size_t k)
{
	ptrdiff_t left = 0, right = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	while (left < right) {
		double pivot = a[left + (right - left) / 2];
		ptrdiff_t i = left, j = right;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double t = a[i];
				a[i++] = a[j];
				a[j--] = t;
			}
		}
		/* a[left..j] <= pivot, a[i..right] >= pivot, between: == pivot */
		if (kk <= j)
			right = j;
		else if (kk >= i)
			left = i;
		else
			break;
	}
	return a[k];
}

int image_window_f64(const double *v, size_t n, double *lo, double *hi)
{
	*lo = *hi = 0;
	if (!n)
		return 0;
	double *a = malloc(n * sizeof(*a));
	if (!a)
		return -1;
	memcpy(a, v, n * sizeof(*a));
	*lo = select_rank(a, n, image_window_lo_rank(n));
	*hi = select_rank(a, n, image_window_hi_rank(n));
	free(a);
	return 0;
}
