#!/usr/bin/env python3
"""How long each kind of thread of some processes waited for a core, over a window.

    sched_wait.py NAME [SECONDS]

Reads /proc/PID/task/*/schedstat (time on a core, time runnable on a run queue, timeslices) of every
process whose name starts with NAME, twice, SECONDS apart (default 2), and prints per thread name
(digits and the peer's address left out, so that a rank's I/O threads add up): threads, cores used,
cores' worth of waiting, and the mean wait per timeslice. A thread that waits long each time it is
woken is one whose core was taken: under NCCL an operation then waits for its slowest channel.
"""
import collections
import os
import re
import sys
import time


def sample(prefix):
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if not f.read().startswith(prefix):
                    continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    run, wait, slices = (int(x) for x in f.read().split())
                out[(pid, tid)] = (name, run, wait, slices)
        except OSError:
            continue
    return out


def main():
    prefix = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    a = sample(prefix)
    time.sleep(seconds)
    b = sample(prefix)
    groups = collections.defaultdict(lambda: [0, 0, 0, 0])
    for key, (name, run, wait, slices) in b.items():
        if key not in a:
            continue
        _, run0, wait0, slices0 = a[key]
        g = groups[(key[0], re.sub(r"[-0-9.:]+$", "", re.sub(r"192\.0\.2\.\d+:\d+", "", name)))]
        g[0] += 1
        g[1] += run - run0
        g[2] += wait - wait0
        g[3] += slices - slices0
    print(f"over {seconds} s: pid, threads, cores on a core, cores' worth waiting for one, mean wait per timeslice (us)")
    for (pid, name), (n, run, wait, slices) in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1][1])):
        if run == 0 and wait == 0:
            continue
        print(f"  {pid} {name:24s} x{n:<3d} {run / seconds / 1e9:5.2f} {wait / seconds / 1e9:5.2f} "
              f"{wait / max(1, slices) / 1e3:8.1f}")


if __name__ == "__main__":
    main()
