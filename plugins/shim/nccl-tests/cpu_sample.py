#!/usr/bin/env python3
"""Where a run's CPU goes, while nccl-tests measures it (run.sh cpu).

    cpu_sample.py LOG BINARY SKIP_S WINDOW_S

Waits for nccl-tests' table header in LOG (the ranks are initialised and connected), waits SKIP_S
more (the warm-up iterations), then reads the box's CPU time (/proc/stat) and every thread of every
process named BINARY (/proc/PID/task/TID/stat), WINDOW_S apart. Prints, in cores (CPU seconds per
second of the window): the box's user, system, softirq, steal and idle time, and per rank the
threads grouped by name (digits dropped), user and system apart, and how long they were runnable
without a core (/proc/PID/task/TID/schedstat: cores' worth, and the mean wait a timeslice). A
transport that moves data through loopback TCP pays for both copies in system time; what it spends
in user time beyond that is its own polling and bookkeeping. Threads that wait long for a core are
what an oversubscribed box costs: under NCCL an operation waits for its slowest channel.
"""
import os
import re
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def box():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return {"user": v[0] + v[1], "system": v[2] + v[5], "softirq": v[6], "steal": v[7],
            "idle": v[3] + v[4]}


def threads(binary):
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != binary[:15]:
                    continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    s = f.read()
                name = s[s.index("(") + 1:s.rindex(")")]
                rest = s[s.rindex(")") + 2:].split()
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    switches = [int(l.split()[1]) for l in f if "ctxt_switches" in l]
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    _, waited, slices = (int(x) for x in f.read().split())
                found[(pid, tid)] = (name, int(rest[11]), int(rest[12]), switches[0], switches[1], waited, slices)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return found


def main():
    log, binary, skip, window = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            with open(log) as f:
                if re.search(r"#\s+size\s+count", f.read()):
                    break
        except FileNotFoundError:
            pass
        time.sleep(0.2)
    else:
        print("cpu: no nccl-tests table in the log within 300 s")
        return
    time.sleep(skip)
    b0, t0, w0 = box(), threads(binary), time.time()
    time.sleep(window)
    b1, t1, w1 = box(), threads(binary), time.time()
    span = (w1 - w0) * TICK
    cores = {k: (b1[k] - b0[k]) / span for k in b0}
    print("cpu: box " + " ".join(f"{k} {v:.2f}" for k, v in cores.items())
          + f" (cores over {w1 - w0:.1f} s)")
    groups, single = {}, []
    seconds = w1 - w0
    for key, (name, ut, st, vol, invol, waited, slices) in t1.items():
        if key not in t0:
            continue
        _, ut0, st0, vol0, invol0, waited0, slices0 = t0[key]
        pid = key[0]
        d = [1, (ut - ut0) / span, (st - st0) / span, (vol - vol0) / seconds, (invol - invol0) / seconds,
             (waited - waited0) / 1e9 / seconds, slices - slices0]
        single.append((pid, name, d))
        g = groups.setdefault((pid, re.sub(r"\d+", "", name)), [0, 0, 0, 0, 0, 0, 0])
        for i, v in enumerate(d):
            g[i] += v
    # per group: threads, cores in user and system time, voluntary switches a second (a thread that
    # blocks or parks), involuntary ones (a thread the scheduler took the core from), cores' worth
    # of time runnable without a core and the mean such wait a timeslice
    for pid in sorted({p for p, _ in groups}):
        rows = sorted(((n, g) for (p, n), g in groups.items() if p == pid),
                      key=lambda r: -(r[1][1] + r[1][2]))
        total = sum(g[1] + g[2] for _, g in rows)
        print(f"cpu: rank pid {pid} {total:.2f} cores: " + "; ".join(
            f"{n} x{g[0]} user {g[1]:.2f} sys {g[2]:.2f} sw/s {g[3]:.0f}+{g[4]:.0f} "
            f"waiting {g[5]:.2f} ({g[5] * seconds * 1e6 / max(1, g[6]):.1f} us a slice)"
            for n, g in rows if g[1] + g[2] >= 0.01))
        busiest = sorted((r for r in single if r[0] == pid), key=lambda r: -(r[2][1] + r[2][2]))[:6]
        print("cpu:   busiest threads: " + "; ".join(
            f"{n} user {d[1]:.2f} sys {d[2]:.2f} sw/s {d[3]:.0f}+{d[4]:.0f}" for _, n, d in busiest))


if __name__ == "__main__":
    main()
