#!/usr/bin/env python3
"""Table of run.sh bench logs: per collective and size, the best configuration of each family
(NCCL's Socket: socket*, JcclSocket through the shim: jccl*), its busbw (out-of-place, GB/s) or,
at 8 B, its time (us), and JcclSocket's ratio to NCCL's Socket (busbw: jccl/socket, time:
socket/jccl; above 1 = JcclSocket better).

8 B comes from run.sh lat's logs (lat-*.log: 20000 warm-up, then 2000 timed iterations) where a
configuration has one, else from the bench sweep, where 8 B is the first size after start-up.

usage: summarize.py OUT_DIR [--all]   (--all also lists every configuration's figure)
       summarize.py ROUND_DIR ROUND_DIR...   (rounds of the same configurations, as run.sh's
       JCCL_ROUNDS makes: per size, each family's best of each round, their medians, JcclSocket's
       ratio in each round, and how many rounds reach the goal: 1.5x from 16 MiB, 1.0x at 8 B.
       One machine's runs differ by a fifth from round to round, so one round's ratio says little.
       A family's best of several configurations is also its best of several draws: compare
       families swept alike, or read each configuration's figures with --all. Where the rounds
       hold more than one JcclSocket configuration, a second table gives each of them against
       NCCL's Socket's best of the same round: an experiment beside the default, draw for draw.)
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


def load(out):
    """{collective: {configuration: {size: (time us, busbw GB/s)}}} and the (collective, configuration) pairs timed warm."""
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
    return runs, warm


def best_of(configs, size, family):
    """((time, busbw), name) of the family's best configuration at size: least time at 8 B, most busbw above."""
    cands = [(rows[size], name) for name, rows in configs.items() if name.startswith(family) and size in rows]
    if not cands:
        return None
    return min(cands, key=lambda c: c[0][0]) if size <= 1024 else max(cands, key=lambda c: c[0][1])


def ratio(socket, jccl, size):
    """JcclSocket's ratio to NCCL's Socket from two (time us, busbw GB/s) rows: time at 8 B, busbw above; above 1 = JcclSocket better."""
    if size <= 1024:
        return socket[0] / jccl[0] if jccl[0] else 0
    return jccl[1] / socket[1] if socket[1] else 0


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def rounds_table(dirs):
    loaded = [load(d)[0] for d in dirs]
    for coll in sorted({c for runs in loaded for c in runs}):
        print("\n### %s: %d rounds (%s)\n" % (coll, len(dirs), ", ".join(os.path.basename(d.rstrip("/")) for d in dirs)))
        print("| size | NCCL Socket, best (median) | JcclSocket, best (median) | ratio per round | median ratio | rounds at goal |")
        print("|---|---|---|---|---|---|")
        for size in SIZES:
            socket, jccl, ratios = [], [], []
            for runs in loaded:
                s = best_of(runs.get(coll, {}), size, "socket")
                j = best_of(runs.get(coll, {}), size, "jccl")
                if s is None or j is None:
                    continue
                small = size <= 1024
                socket.append(s[0][0] if small else s[0][1])
                jccl.append(j[0][0] if small else j[0][1])
                ratios.append(ratio(s[0], j[0], size))
            if not ratios:
                continue
            goal = 1.0 if size <= 1024 else 1.5
            unit = "us" if size <= 1024 else "GB/s"
            print("| %s | %.2f %s | %.2f %s | %s | %.2fx | %d of %d at %.1fx |" % (
                human(size), median(socket), unit, median(jccl), unit, ", ".join("%.2f" % r for r in ratios),
                median(ratios), sum(r >= goal for r in ratios), len(ratios), goal))
        per_config_table(loaded, coll)


def per_config_table(loaded, coll):
    """Each JcclSocket configuration's median ratio (and rounds at the goal) against NCCL's best of each round,
    this build's and those pack.sh packed beside it (before, build-NAME)."""
    names = sorted({n for runs in loaded for n in runs.get(coll, {}) if n.startswith(("jccl", "before", "build-"))})
    if len(names) < 2:
        return
    print("\n%s, each JcclSocket configuration against NCCL's Socket's best of the same round "
          "(median ratio, rounds at the goal):\n" % coll)
    print("| configuration | " + " | ".join(human(s) for s in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for name in names:
        cells = []
        for size in SIZES:
            ratios = []
            for runs in loaded:
                configs = runs.get(coll, {})
                s = best_of(configs, size, "socket")
                mine = configs.get(name, {}).get(size)
                if s is None or mine is None:
                    continue
                ratios.append(ratio(s[0], mine, size))
            goal = 1.0 if size <= 1024 else 1.5
            cells.append("%.2fx (%d of %d)" % (median(ratios), sum(r >= goal for r in ratios), len(ratios))
                         if ratios else "-")
        print("| %s | %s |" % (name, " | ".join(cells)))


def main():
    dirs = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(dirs) > 1:
        rounds_table(dirs)
        return
    out = dirs[0]
    show_all = "--all" in sys.argv
    runs, warm = load(out)
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
                b = best_of(configs, size, family)
                if b is not None:
                    best[family] = b
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
