/* span.c - a phase to the timeline and to the installed ranges (see
 * span.h). What it does not do: decide the phases (loop/train.c).
 */
#include <stddef.h>

#include "train/dist.h"
#include "train/span.h"

static const struct span_ranges *ranges;

void span_set_ranges(const struct span_ranges *r)
{
	ranges = r;
}

void span_begin(const char *lane, const char *name)
{
	dist_span_begin(lane, name);
	if (ranges)
		ranges->push(name);
}

void span_end(const char *lane)
{
	if (ranges)
		ranges->pop();
	dist_span_end(lane);
}
