#!/usr/bin/env python3
"""Where the time under one frame goes, from async-profiler's collapsed stacks (one "frame;frame;...
count" line per stack; files from several intervals or processes are summed).

For every stack through ROOT (a substring of a frame name, e.g. NetBridge.irecv; the outermost
matching frame counts), prints the samples under it, then the frames ROOT calls directly and the
leaf frames (where the CPU was), each as a share of ROOT's samples. Frames of the JDK's
method-handle plumbing (LambdaForm, DowncallStub, UpcallStub, Invokers) are skipped when naming
ROOT's callees, so that a downcall shows as the Java method that made it.

usage: collapsed_breakdown.py ROOT FILE... [--top N] [--thread SUBSTRING]
  profile with: -agentpath:libasyncProfiler.so=start,event=cpu,cstack=vm,interval=200us,loop=2s,
                file=DIR/p-%p-%t.collapsed,collapsed,threads   (through JCCL_SHIM_JVM_OPTS)
"""
import collections
import sys

PLUMBING = ("LambdaForm$", "DowncallStub", "UpcallStub", "java/lang/invoke/Invokers")


def main():
    args = sys.argv[1:]
    top = 15
    thread = None
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    if "--thread" in args:
        i = args.index("--thread")
        thread = args[i + 1]
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    root, files = args[0], args[1:]
    total = 0
    under = 0
    callees = collections.Counter()
    leaves = collections.Counter()
    for path in files:
        for line in open(path, errors="replace"):
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not count.isdigit():
                continue
            n = int(count)
            frames = stack.split(";")
            if thread and thread not in frames[0]:
                continue
            total += n
            at = next((i for i, f in enumerate(frames) if root in f), -1)
            if at < 0:
                continue
            under += n
            rest = [f for f in frames[at + 1:] if not f.startswith(PLUMBING) and "LambdaForm" not in f]
            callees[rest[0] if rest else "(self)"] += n
            leaves[frames[-1] if at + 1 < len(frames) else "(self)"] += n
    if under == 0:
        sys.exit("no stack through %r in %d samples" % (root, total))
    print("%s: %d of %d samples (%.1f%%)" % (root, under, total, 100.0 * under / total))
    for title, counter in (("calls", callees), ("leaves", leaves)):
        print("  %s:" % title)
        for name, n in counter.most_common(top):
            print("    %5.1f%%  %s" % (100.0 * n / under, name))


if __name__ == "__main__":
    main()
