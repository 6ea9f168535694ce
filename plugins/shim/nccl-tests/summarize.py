#!/usr/bin/env python3
"""Table of run.sh bench logs: per collective and size, the best configuration of each family
(NCCL's Socket: socket*, JcclSocket through the shim: jccl*), its busbw (out-of-place, GB/s) or,
at 8 B, its time (us), and JcclSocket's ratio to NCCL's Socket (busbw: jccl/socket, time:
socket/jccl; above 1 = JcclSocket better).

8 B comes from run.sh lat's logs (lat-*.log: 20000 warm-up, then 2000 timed iterations) where a
configuration has one, else from the bench sweep, where 8 B is the first size after start-up.

usage: summarize.py OUT_DIR [--all]   (--all also lists every configuration's figure)
"""
import glob
import os
import re
import sys

SIZES = [8, 16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20]


def parse(path):
    rows = {}
    for line in open(path, errors="replace"):
        t = line.split()
        if len(t) >= 9 and t[0].isdigit() and t[1].isdigit():
            try:
                rows[int(t[0])] = (float(t[5]), float(t[7]))  # out-of-place time (us), busbw (GB/s)
            except ValueError:
                pass
    return rows


def human(n):
    return "%d B" % n if n < 1024 else "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10)


def main():
    out = sys.argv[1]
    show_all = "--all" in sys.argv
    runs = {}
    warm = set()
    logs = sorted(glob.glob(os.path.join(out, "bench-*.log"))) + sorted(glob.glob(os.path.join(out, "lat-*.log")))
    for path in logs:
        m = re.match(r"(bench|lat)-(all_reduce|sendrecv)-(.*)\.log$", os.path.basename(path))
        if m:
            rows = parse(path)
            if rows:
                # a lat run's 8 B replaces the sweep's (read after it)
                runs.setdefault(m.group(2), {}).setdefault(m.group(3), {}).update(rows)
                if m.group(1) == "lat":
                    warm.add((m.group(2), m.group(3)))
            else:
                print("no results in %s" % path)
    for coll, configs in runs.items():
        print("\n### %s (2 ranks, one GPU, network path)\n" % coll)
        if any(c == coll for c, _ in warm):
            print("8 B: warm (run.sh lat) for %s\n" % ", ".join(sorted(n for c, n in warm if c == coll)))
        before = any(n.startswith("before") for n in configs)
        print("| size | NCCL Socket, best | config | JcclSocket, best | config | ratio |"
              + (" JcclSocket before, best |" if before else ""))
        print("|---|---|---|---|---|---|" + ("---|" if before else ""))
        for size in SIZES:
            best = {}
            for family in ("socket", "jccl", "before"):
                cands = [(rows[size], name) for name, rows in configs.items()
                         if name.startswith(family) and size in rows]
                if not cands:
                    continue
                if size <= 1024:
                    best[family] = min(cands, key=lambda c: c[0][0])
                else:
                    best[family] = max(cands, key=lambda c: c[0][1])
            if "socket" not in best or "jccl" not in best:
                continue
            extra = ""
            if before:
                (bt, bb), _ = best.get("before", ((0, 0), ""))
                extra = " %s |" % (("%.1f us" % bt) if size <= 1024 else ("%.2f GB/s" % bb)) if "before" in best else " - |"
            (st, sb), sn = best["socket"]
            (jt, jb), jn = best["jccl"]
            if size <= 1024:
                print("| %s | %.1f us | %s | %.1f us | %s | %.2fx |" % (human(size), st, sn, jt, jn, st / jt) + extra)
            else:
                print("| %s | %.2f GB/s | %s | %.2f GB/s | %s | %.2fx |" % (human(size), sb, sn, jb, jn,
                                                                         jb / sb if sb else 0) + extra)
        if show_all:
            print("\nevery configuration (%s): size: busbw GB/s, or time us at 8 B" % coll)
            for name, rows in sorted(configs.items()):
                cells = ["%s %s" % (human(s), ("%.1fus" % rows[s][0]) if s <= 1024 else "%.2f" % rows[s][1])
                         for s in SIZES if s in rows]
                print("  %-28s %s" % (name, "  ".join(cells)))


if __name__ == "__main__":
    main()
