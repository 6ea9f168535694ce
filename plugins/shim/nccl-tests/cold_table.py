#!/usr/bin/env python3
"""Cold small sizes, as a user's first nccl-tests run meets them: per collective, configuration and
size, the out-of-place time (us) of each round of run.sh bench (JCCL_ROUNDS, OUT/r1..rN) and the
median over rounds, with each configuration's median as a ratio to the first configuration's
(above 1: slower than it). Sizes: 8 B, 1 KiB, 8 KiB, 64 KiB, 1, 4 and 16 MiB where the runs have them.

usage: cold_table.py ROUND_DIR...
"""
import glob
import os
import re
import sys

from summarize import parse

SIZES = [8, 1 << 10, 8 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20]


def median(v):
    v = sorted(v)
    n = len(v)
    return None if n == 0 else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(__doc__)
    runs = {}  # (coll, config) -> [rows per round]
    order = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "bench-*.log"))):
            m = re.match(r"bench-(all_reduce|sendrecv|[a-z_]+?)-(.*)\.log$", os.path.basename(path))
            if not m:
                continue
            key = (m.group(1), m.group(2))
            if key not in runs:
                order.append(key)
            runs.setdefault(key, []).append(parse(path))
    for coll in sorted({c for c, _ in order}):
        configs = [k for k in order if k[0] == coll]
        print("%s, out-of-place us (rounds; median; ratio to %s)" % (coll, configs[0][1]))
        base = {}
        for key in configs:
            cells = []
            for s in SIZES:
                vals = [r[s][0] for r in runs[key] if s in r]
                if not vals:
                    continue
                med = median(vals)
                if key == configs[0]:
                    base[s] = med
                ratio = " %.2fx" % (med / base[s]) if s in base and base[s] else ""
                cells.append("%s: %s; %.1f%s" % (s, ", ".join("%.1f" % v for v in vals), med, ratio))
            print("  %-40s %s" % (key[1], " | ".join(cells)))


if __name__ == "__main__":
    main()
