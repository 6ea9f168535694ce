#!/usr/bin/env python3
"""8-byte times of run.sh lat, run by run: each run's median row (out-of-place us) over its
JCCL_LAT_CYCLES rows (nccl-tests -N), the spread of the rows within it, and per round the ratio of
every JcclSocket configuration (jccl*, before*) to every NCCL Socket one (socket*), time of
socket / time of jccl (above 1: JcclSocket faster).

A run's rows spread little; runs spread more (where the scheduler put each rank's threads), so
this separates the two: compare the within-run spread with the between-run one.

usage: lat_rows.py DIR...   (round directories OUT/r1..rN, or one OUT of a single round)
"""
import glob
import os
import re
import statistics
import sys


def rows(path):
    """Out-of-place times (us) of every 8-byte row of one nccl-tests log."""
    times = []
    for line in open(path, errors="replace"):
        t = line.split()
        if len(t) >= 9 and t[0] == "8" and t[1].isdigit():
            try:
                times.append(float(t[5]))
            except ValueError:
                pass
    return times


def main(dirs):
    runs = {}  # (coll, config) -> [(round, median, min, max, rows)]
    for k, d in enumerate(dirs, 1):
        for log in sorted(glob.glob(os.path.join(d, "lat-*.log"))):
            m = re.match(r"lat-(all_reduce|sendrecv|[a-z_]+?)-(.+)\.log$", os.path.basename(log))
            if not m:
                continue
            times = rows(log)
            if not times:
                print("%s: no 8-byte row (failed run?)" % log)
                continue
            runs.setdefault((m.group(1), m.group(2)), []).append(
                (k, statistics.median(times), min(times), max(times), len(times)))
    if not runs:
        print("no lat-*.log with 8-byte rows under %s" % " ".join(dirs))
        return 1
    print("%-11s %-22s %s" % ("collective", "configuration", "per run: median us [min-max of its rows, rows]"))
    for (coll, cfg), rs in sorted(runs.items()):
        cells = ", ".join("r%d %.2f [%.2f-%.2f, %d]" % r for r in rs)
        print("%-11s %-22s median of runs %.2f: %s" % (coll, cfg, statistics.median(r[1] for r in rs), cells))
    print()
    print("per-round ratios, socket time / jccl time (above 1: JcclSocket faster)")
    for coll in sorted({c for c, _ in runs}):
        ours = [c for cc, c in runs if cc == coll and not c.startswith("socket")]
        theirs = [c for cc, c in runs if cc == coll and c.startswith("socket")]
        for o in sorted(ours):
            for t in sorted(theirs):
                a = {r[0]: r[1] for r in runs[(coll, o)]}
                b = {r[0]: r[1] for r in runs[(coll, t)]}
                ratios = [b[k] / a[k] for k in sorted(a) if k in b]
                if ratios:
                    print("%-11s %s vs %s: median %.3fx, %d of %d rounds at 1.0x or better: %s" % (
                        coll, o, t, statistics.median(ratios), sum(r >= 1.0 for r in ratios), len(ratios),
                        ", ".join("%.3f" % r for r in ratios)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
