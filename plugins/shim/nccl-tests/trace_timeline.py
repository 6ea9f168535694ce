#!/usr/bin/env python3
"""Where an operation under NCCL waits, from JcclSocket's traces (JCCL_SOCKET_TRACE=DIR).

    trace_timeline.py DIR [--window N] [--show K] [--per-op M]

Each comm of both ranks wrote DIR/trace-PID-send|recv-ORDINAL.tsv at close: its last requests
(posted by NCCL, reported done to it) and data-stream chunks (queued, first tried, last byte), on
the host's one monotonic clock. This pairs the two ends of each connection (the sender's local
address is the receiver's remote one), leaves out the shim's own loopback warm-up (both ends in one
process), and over the last N requests of each connection (default 4000) prints the medians, in
microseconds, of:

  sender:   a chunk's wait for its I/O thread once it could move, its write; the stream's share
            of the time busy, waiting, and idle with nothing queued
  receiver: from the sender queuing a chunk to the receiver queuing it (its DATA frame read by
            NCCL's proxy thread), its wait for the I/O thread, its read, its last byte after the
            sender's, and from its last byte to NCCL's test() seeing the receive done
  NCCL:     on each rank and channel (a channel's send and receive comms are the ones of the same
            ordinal), from a receive seen done to the next send that NCCL posts on the channel

the tails of a chunk's write, read and lag (one late chunk holds its channel up, and an operation
waits for its slowest channel), with --per-op M (the messages a connection carries per operation)
when each rank's channels ended the last operations, and a timeline of K requests (default 12) of
the first channel, both directions, so that the critical path of an operation reads off it.
"""
import argparse
import glob
import os
import statistics
import sys


def load(path):
    comm = {"path": path, "R": [], "C": {}}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "# comm":
                comm.update(dir=p[1], ordinal=int(p[2]), local=p[3], remote=p[4], pid=int(p[5]))
            elif p[0] == "R":
                comm["R"].append((int(p[1]), int(p[2]), int(p[3])))
            elif p[0] == "C":
                comm["C"].setdefault(int(p[1]), []).append(tuple(int(x) for x in p[2:]))
    return comm


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def us(ns):
    return ns / 1000.0


def stream_stats(chunks):
    """chunks: (index, length, queued, started, ended). Waits, moves, and busy/wait/idle shares."""
    waits, moves = [], []
    busy = wait = idle = 0
    prev_end = None
    for _, _, q, s, e in chunks:
        could = q if prev_end is None else max(q, prev_end)
        waits.append(s - could)
        moves.append(e - s)
        busy += e - s
        wait += s - could
        if prev_end is not None and q > prev_end:
            idle += q - prev_end
        prev_end = e
    span = chunks[-1][4] - chunks[0][2] if chunks else 1
    return waits, moves, busy / span, wait / span, idle / span


def ops_report(channels, per_op, last=12):
    """An operation ends with its slowest channel: when each rank's receives of the last operations
    ended, from the operation's first send on that rank."""
    print(f"\nlast {last} operations ({per_op} messages a connection each): from a rank's first send of the "
          "operation, when its channels' receives ended (first and last, us), and the gap to the next one")
    for pid in sorted(channels):
        sends_of = channels[pid].get("send", [])
        recvs_of = channels[pid].get("recv", [])
        if not sends_of or not recvs_of:
            continue
        posts = [{i: p for i, p, _ in c["R"]} for c in sends_of]
        dones = [{i: d for i, _, d in c["R"]} for c in recvs_of]
        lo = max(min(m) for m in posts + dones)
        hi = min(max(m) for m in posts + dones)
        ops = list(range((lo + per_op - 1) // per_op, (hi + 1) // per_op))[-last:]
        prev_end = None
        for op in ops:
            start = min(m[op * per_op] for m in posts)
            ends = sorted(m[op * per_op + per_op - 1] for m in dones)
            gap = "" if prev_end is None else f", {us(start - prev_end):.0f} after the previous one's last"
            print(f"  {pid} operation {op}: channels ended {us(ends[0] - start):.0f} to {us(ends[-1] - start):.0f}{gap}")
            prev_end = ends[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--window", type=int, default=4000)
    ap.add_argument("--show", type=int, default=12)
    ap.add_argument("--per-op", type=int, default=0,
                    help="messages a connection carries per operation (a 16 MiB all_reduce on 8 channels: 4): "
                         "prints when each rank's channels ended the last operations")
    a = ap.parse_args()
    comms = [load(p) for p in sorted(glob.glob(os.path.join(a.dir, "trace-*.tsv")))]
    sends = [c for c in comms if c.get("dir") == "send"]
    recvs = {(c["local"], c["remote"]): c for c in comms if c.get("dir") == "recv"}
    pairs = []
    for s in sends:
        r = recvs.get((s["remote"], s["local"]))
        if r is not None and r["pid"] != s["pid"]:
            pairs.append((s, r))
    if not pairs:
        sys.exit("no connection between two processes in " + a.dir)
    pairs.sort(key=lambda p: (p[0]["pid"], p[0]["ordinal"]))
    print(f"{len(pairs)} connections between processes {sorted({p[0]['pid'] for p in pairs})}; "
          f"last {a.window} requests each; medians in us")
    print("| connection | chunks | sender wait | write | busy/wait/idle | frame to receiver | receiver wait | read | "
          "last byte after sender's | to NCCL's test |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    # Chunk by chunk, both ends matched; also gathered over all connections for the tails.
    writes, reads, lags = [], [], []
    for s, r in pairs:
        sw, sm, rq, rw, rm, tail, notice = [], [], [], [], [], [], []
        shares = [0.0, 0.0, 0.0]
        streams = sorted(set(s["C"]) & set(r["C"]))
        for k in streams:
            sc = s["C"][k][-a.window:]
            rc = r["C"][k][-a.window:]
            w, m, *share = stream_stats(sc)
            sw += w
            sm += m
            shares = [x + y / len(streams) for x, y in zip(shares, share)]
            rw += stream_stats(rc)[0]
            by_index = {c[0]: c for c in rc}
            for c in sc:
                d = by_index.get(c[0])
                if d:
                    rq.append(d[2] - c[2])
                    rm.append(d[4] - d[3])
                    tail.append(d[4] - c[4])
        writes += sm
        reads += rm
        lags += tail
        # One chunk per request (one stream, messages up to the chunk size): last byte to test().
        if len(streams) == 1:
            rc = {c[0]: c for c in r["C"][streams[0]]}
            for idx, _, done in r["R"][-a.window:]:
                c = rc.get(idx)
                if c:
                    notice.append(done - c[4])
        name = f"{s['pid']}#{s['ordinal']} -> {r['pid']}#{r['ordinal']}"
        print(f"| {name} | {len(sm)} | {us(med(sw)):.1f} | {us(med(sm)):.1f} | "
              f"{shares[0]:.2f}/{shares[1]:.2f}/{shares[2]:.2f} | {us(med(rq)):.1f} | {us(med(rw)):.1f} | "
              f"{us(med(rm)):.1f} | {us(med(tail)):.1f} | {us(med(notice)):.1f} |")

    # The tails: one late chunk holds up its channel, and an operation waits for its slowest channel.
    print("\ntails over all connections (us): p50, p90, p99, max; chunks over 500 us")
    for name, xs in (("sender's write", writes), ("receiver's read, first try to last byte", reads),
                     ("receiver's last byte after the sender's", lags)):
        if xs:
            xs.sort()
            q = lambda f: us(xs[min(len(xs) - 1, int(f * len(xs)))])
            over = sum(x > 500_000 for x in xs)
            print(f"  {name}: {q(.5):.0f}, {q(.9):.0f}, {q(.99):.0f}, {us(xs[-1]):.0f}; {over} of {len(xs)} "
                  f"({100.0 * over / len(xs):.1f}%)")

    # NCCL's turnaround on each rank and channel: a receive seen done, then the channel's next send.
    # NCCL makes a channel's comms in channel order: a rank's i-th networked send comm and its i-th
    # networked receive comm are channel i's (the shim's warm-up comms, made first, are left out).
    channels = {}
    for s, r in pairs:
        channels.setdefault(s["pid"], {}).setdefault("send", []).append(s)
        channels.setdefault(r["pid"], {}).setdefault("recv", []).append(r)
    print("\nrank (pid), channel: from a receive seen done to the next send posted on the channel "
          "(median and quartiles, us; sends with no receive done since the last send left out)")
    for pid in sorted(channels):
        sends_of = sorted(channels[pid].get("send", []), key=lambda c: c["ordinal"])
        recvs_of = sorted(channels[pid].get("recv", []), key=lambda c: c["ordinal"])
        for channel, (s, r) in enumerate(zip(sends_of, recvs_of)):
            if not s["R"] or not r["R"]:
                continue
            dones = sorted(d for _, _, d in r["R"][-a.window:])
            posts = [p for _, p, _ in s["R"][-a.window:]]
            gaps, j, last_post = [], 0, None
            for p in posts:
                while j < len(dones) and dones[j] <= p:
                    j += 1
                if j > 0 and (last_post is None or dones[j - 1] > last_post):
                    gaps.append(p - dones[j - 1])
                last_post = p
            if len(gaps) >= 4:
                q = statistics.quantiles(gaps, n=4)
                print(f"  {pid} channel {channel}: {us(q[1]):.1f} ({us(q[0]):.1f} to {us(q[2]):.1f}), {len(gaps)} sends")

    if a.per_op > 0:
        ops_report(channels, a.per_op)

    # A timeline of the first channel's two directions.
    first = min(channels[pairs[0][0]["pid"]]["send"], key=lambda c: c["ordinal"])
    s0, r0 = next((s, r) for s, r in pairs if s is first)
    first_back = min(channels[r0["pid"]].get("send", [r0]), key=lambda c: c["ordinal"])
    back = next(((s, r) for s, r in pairs if s is first_back), None)
    events = []

    def add(pair, tag):
        s, r = pair
        n = min(len(s["R"]), len(r["R"]))
        start = max(0, n - a.window // 2)
        for idx, posted, done in s["R"][start:start + a.show]:
            events.append((posted, f"{tag} send #{idx} posted by NCCL ({s['pid']})"))
            events.append((done, f"{tag} send #{idx} seen done by NCCL"))
        wanted = {idx for idx, _, _ in s["R"][start:start + a.show]}
        for k in s["C"]:
            for c in s["C"][k]:
                if c[0] in wanted:
                    events.append((c[3], f"{tag}   sender stream {k} chunk #{c[0]} ({c[1] >> 10} KiB) write starts"))
                    events.append((c[4], f"{tag}   sender stream {k} chunk #{c[0]} written"))
        for k in r["C"]:
            for c in r["C"][k]:
                if c[0] in wanted:
                    events.append((c[2], f"{tag}   receiver has chunk #{c[0]}'s frame"))
                    events.append((c[3], f"{tag}   receiver starts reading chunk #{c[0]}"))
                    events.append((c[4], f"{tag}   receiver has chunk #{c[0]}'s last byte"))
        for idx, posted, done in r["R"]:
            if idx in wanted:
                events.append((posted, f"{tag} recv #{idx} posted by NCCL ({r['pid']})"))
                events.append((done, f"{tag} recv #{idx} seen done by NCCL"))

    add((s0, r0), "A>B")
    if back:
        add(back, "B>A")
    events.sort()
    if events:
        t0 = events[0][0]
        print(f"\ntimeline, channel 0 (A = {s0['pid']}, B = {r0['pid']}), us from the first event:")
        for t, what in events:
            print(f"{us(t - t0):10.1f}  {what}")


if __name__ == "__main__":
    main()
