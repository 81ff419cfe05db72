#!/usr/bin/env python3
"""hvd-timeline-summary.py TIMELINE.json [--json] - a job-efficiency summary
from an hvd timeline (HVD_TIMELINE=path; Chrome trace format, practice O3).

Lanes ("processes" in the trace) are named by the runtime: one per tensor
(phases NEGOTIATE_ALLREDUCE, QUEUE, MEMCPY_IN_FUSION_BUFFER,
MPI_ALLREDUCE / NCCL_ALLREDUCE, MEMCPY_OUT_FUSION_BUFFER) and the trainer's
own lanes (compute spans such as FORWARD/BACKWARD and DATA_WAIT). Prints
the wall span, the time in each phase (merged, so overlapping spans of
different tensors count once), and the shares that tell whether the data
pipeline (P1, O1) or communication (C1, C5) limits the job: data-wait %,
allreduce % and how much of the allreduce time overlapped compute.
Python is for contrib tools only; the product does not need it.
"""
import json
import sys
from collections import defaultdict


def spans(events):
    """(lane, phase) -> list of (start, end) in microseconds."""
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e.get("args", {}).get("name", str(e["pid"]))
    open_spans = defaultdict(list)
    out = defaultdict(list)
    for e in events:
        ph, pid = e.get("ph"), e.get("pid")
        if ph == "B":
            open_spans[pid].append((e.get("name", "?"), e["ts"]))
        elif ph == "E" and open_spans[pid]:
            name, ts = open_spans[pid].pop()
            out[(names.get(pid, str(pid)), name)].append((ts, e["ts"]))
        elif ph == "X":
            out[(names.get(pid, str(pid)), e.get("name", "?"))].append(
                (e["ts"], e["ts"] + e.get("dur", 0)))
    return out


def merge(intervals):
    total, end = 0, None
    merged = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    for s, e in merged:
        total += e - s
    return total, merged


def overlap(a, b):
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print("usage: hvd-timeline-summary.py TIMELINE.json [--json]", file=sys.stderr)
        sys.exit(2)
    try:
        with open(args[0]) as f:
            events = json.load(f)
    except (OSError, ValueError) as e:
        print(f"hvd-timeline-summary: '{args[0]}': {e}", file=sys.stderr)
        sys.exit(1)
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    s = spans(events)
    if not s:
        print(f"hvd-timeline-summary: '{args[0]}': no spans", file=sys.stderr)
        sys.exit(1)
    t0 = min(a for v in s.values() for a, _ in v)
    t1 = max(b for v in s.values() for _, b in v)
    wall = max(t1 - t0, 1)
    by_phase = defaultdict(list)
    for (lane, phase), v in s.items():
        by_phase[phase].extend(v)
    phase_total = {p: merge(v) for p, v in by_phase.items()}
    allreduce = [iv for p, v in by_phase.items() if p.endswith("ALLREDUCE") and
                 not p.startswith("NEGOTIATE") for iv in v]
    compute = [iv for p, v in by_phase.items() if p in ("FORWARD", "BACKWARD", "COMPUTE",
                                                           "OPTIMIZER") for iv in v]
    ar_total, ar_merged = merge(allreduce)
    co_total, co_merged = merge(compute)
    dw_total = phase_total.get("DATA_WAIT", (0, []))[0]
    summary = {
        "wall_s": wall / 1e6,
        "phases_s": {p: t / 1e6 for p, (t, _) in sorted(phase_total.items())},
        "data_wait_pct": 100.0 * dw_total / wall,
        "allreduce_pct": 100.0 * ar_total / wall,
        "allreduce_overlapped_pct": 100.0 * overlap(ar_merged, co_merged) / ar_total if ar_total else 0.0,
        "compute_pct": 100.0 * co_total / wall,
    }
    if "--json" in sys.argv:
        print(json.dumps(summary, indent=1))
        return
    print(f"timeline {args[0]}: {summary['wall_s']:.3f} s")
    for p, t in summary["phases_s"].items():
        print(f"  {p:<28} {t:10.3f} s  {100.0 * t / summary['wall_s']:5.1f} %")
    print(f"compute {summary['compute_pct']:.1f} %, data wait {summary['data_wait_pct']:.1f} %, "
          f"allreduce {summary['allreduce_pct']:.1f} % "
          f"({summary['allreduce_overlapped_pct']:.1f} % of it overlapped with compute)")


if __name__ == "__main__":
    main()
