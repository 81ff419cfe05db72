#!/usr/bin/env python3
"""tb_read.py DIR - TensorBoard's own reader (EventAccumulator, from the
pinned tensorboard of tests/pyenv.txt) on the event files in DIR; prints
each scalar as one line `TAG STEP VALUE` (VALUE as float32 repr, %.9g),
sorted by tag and step, after TensorBoard's own handling of restarts
(SessionLog START purges the orphaned points). Exit 1 with one line when
the reader finds nothing. Used by tests/test_metrics.c."""
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main():
    acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
    acc.Reload()
    tags = acc.Tags()["scalars"]
    if not tags:
        print("tb_read: %s: no scalars" % sys.argv[1], file=sys.stderr)
        return 1
    for tag in sorted(tags):
        for e in acc.Scalars(tag):
            print("%s %d %.9g" % (tag, e.step, e.value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
