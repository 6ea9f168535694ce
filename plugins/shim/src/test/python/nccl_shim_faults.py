#!/usr/bin/env python3
"""Real NCCL through the JCCL shim under PyTorch: what a peer's death or freeze does to the survivor,
and whether communicators can be destroyed and re-created without leaking.

  peer   two ranks loop all_reduce; rank 1 then freezes (SIGSTOP) or dies (SIGKILL) at a known
         moment. Rank 0 records how long after that its all_reduce failed and with what error
         (None: no error within --wait, what NCCL's Socket gives for a frozen peer).
         PyTorch's own timeout is set to 10 minutes, so an error within seconds comes from NCCL,
         i.e. from the transport's request failing (ncclRemoteError), not from PyTorch's watchdog.
  cycle  N times: init_process_group, all_reduce (checked), destroy_process_group; after each,
         the process's open file descriptors, threads and RSS. Growth after the first cycle leaks.

Each runs for the configurations given (jccl = the shim with JcclSocket, socket = NCCL's Socket,
the baseline), two ranks on one GPU with different NCCL_HOSTID.

usage: python3 nccl_shim_faults.py --plugin /abs/libnccl-net.so --out-dir DIR \\
           [--peer freeze,kill] [--cycle 5] [--configs jccl,socket] [--bound 30]
       python3 nccl_shim_faults.py --backend gloo ...   (no GPU: the script's own logic, on CPU,
           where only gloo's own timeout, set to the bound, can end a frozen peer's wait)
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nccl_shim_check import configuration, free_port, rank_environment  # noqa: E402


def thread_names(pid="self"):
    """Threads by name (/proc/PID/task/*/comm): what grew tells whose threads they are."""
    names = {}
    for tid in os.listdir("/proc/%s/task" % pid):
        try:
            with open("/proc/%s/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
        except OSError:
            continue
        names[name] = names.get(name, 0) + 1
    return names


def hang_report(pid):
    """Where a hung process's threads are: name, kernel wait channel and system call of each, then
    native stacks where gdb exists. Written into the report so that one run on the GPU says why."""
    lines = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
        fields = []
        for entry in ("comm", "wchan", "syscall"):
            try:
                with open("/proc/%d/task/%s/%s" % (pid, tid, entry)) as f:
                    fields.append(f.read().strip().split(" ")[0])
            except OSError:
                fields.append("?")
        lines.append("%s %s wchan=%s syscall=%s" % (tid, fields[0], fields[1], fields[2]))
    try:
        gdb = subprocess.run(["gdb", "-batch", "-p", str(pid), "-ex", "thread apply all bt 12"],
                             capture_output=True, text=True, timeout=60)
        lines += [l for l in gdb.stdout.splitlines() if l.startswith(("#", "Thread"))]
    except (OSError, subprocess.SubprocessError) as e:
        lines.append("no native stacks: %s" % e)
    return lines


def resources():
    fds = len(os.listdir("/proc/self/fd"))
    threads = len(os.listdir("/proc/self/task"))
    rss = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
    return {"fds": fds, "threads": threads, "rss_mib": rss, "thread_names": thread_names()}


def worker(args):
    import faulthandler
    import torch
    import torch.distributed as dist
    # A survivor that hangs dumps its Python stacks (every thread) into its log before it is killed.
    faulthandler.dump_traceback_later(args.wait + 10, exit=False)
    from datetime import timedelta
    rank = int(os.environ["RANK"])
    gpu = args.backend == "nccl"
    device = "cuda:0" if gpu else "cpu"
    if gpu:
        torch.cuda.set_device(0)
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    out = {"rank": rank}

    def init(port):
        # NCCL: a 10-minute timeout, so that an error within the bound can only come from NCCL.
        kwargs = {"device_id": torch.device(device)} if gpu else {}
        # --torch-timeout: PyTorch's own watchdog instead, the only bound NCCL's Socket has.
        timeout = timedelta(minutes=10) if gpu else timedelta(seconds=args.bound / 2)
        if args.torch_timeout:
            timeout = timedelta(seconds=args.torch_timeout)
        dist.init_process_group(args.backend, init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2,
                                timeout=timeout, **kwargs)

    if args.mode == "cycle":
        out["cycles"] = []
        for i in range(args.cycles):
            init(args.port + i)
            t = torch.full((1 << 20,), rank + 1, dtype=torch.int32, device=device)
            dist.all_reduce(t)
            sync()
            ok = bool((t == 3).all().item())
            dist.destroy_process_group()
            sync()
            out["cycles"].append(dict(resources(), ok=ok))
    else:
        init(args.port)
        t = torch.ones(1 << 16, dtype=torch.float32, device=device)
        for _ in range(20):
            dist.all_reduce(t)
        sync()
        if rank == 1:
            with open(args.result + ".fault", "w") as f:
                f.write(str(time.time()))
            os.kill(os.getpid(), signal.SIGSTOP if args.mode == "freeze" else signal.SIGKILL)
        time.sleep(0.5)  # rank 1 is gone by now; the next all_reduce cannot complete normally
        start = time.time()
        try:
            # One all_reduce in flight, polled: is_completed() asks NCCL for the communicator's
            # asynchronous error and completes the work with it; wait() then raises it. (Launching
            # all_reduce after all_reduce instead fills NCCL's queue of proxy operations, and the
            # next launch spins on the CPU, error or not: that measures the queue, not the transport.)
            work = dist.all_reduce(t, async_op=True)
            while not work.is_completed() and time.time() - start < args.wait:
                time.sleep(0.05)
            out["completed_without_error"] = work.is_completed()
            if work.is_completed():
                work.wait()
            out["error"] = None
        except Exception as e:  # what PyTorch raised, with NCCL's result inside
            out["error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
        out["failed_after_s"] = time.time()
    with open(args.result, "w") as f:
        json.dump(out, f)
    sys.stdout.flush()
    os._exit(0)  # skip destroy: the peer is gone


def run(args, name, mode):
    env_extra, _, _ = configuration(name, args.plugin)
    env_extra.pop("NCCL_DEBUG_SUBSYS", None)
    env_extra["NCCL_DEBUG"] = args.nccl_debug or ("WARN" if mode != "cycle" else "INFO")
    port = free_port()
    tag = "%s-%s" % (mode, name)
    procs, results = [], []
    for rank in (0, 1):
        env = rank_environment(env_extra, rank, args.java_home)
        env.update({"TORCH_NCCL_BLOCKING_WAIT": "1", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"})
        result = os.path.join(args.out_dir, "%s-rank%d.json" % (tag, rank))
        results.append(result)
        log = open(os.path.join(args.out_dir, "%s-rank%d.log" % (tag, rank)), "w")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--mode", mode, "--port", str(port),
               "--cycles", str(args.cycle), "--wait", str(args.wait), "--bound", str(args.bound),
               "--backend", args.backend, "--result", result, "--torch-timeout", str(args.torch_timeout)]
        procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))
    deadline = time.time() + args.wait + 30
    waited = procs if mode == "cycle" else procs[:1]  # a frozen or killed rank 1 never exits by itself
    while any(p.poll() is None for p in waited) and time.time() < deadline:
        time.sleep(0.2)
    hung = any(p.poll() is None for p in waited)
    report = hang_report(procs[0].pid) if procs[0].poll() is None and mode != "cycle" else []
    for p in procs:
        if p.poll() is None:
            p.kill()  # SIGKILL also ends a stopped process
    o = {"config": name, "mode": mode, "survivor_hung": hung}
    if report:
        with open(os.path.join(args.out_dir, "%s-rank0.hang.txt" % tag), "w") as f:
            f.write("\n".join(report) + "\n")
    try:
        r0 = json.load(open(results[0]))
        if mode == "cycle":
            r1 = json.load(open(results[1]))
            o["cycles"] = [r0["cycles"], r1["cycles"]]
            growth = {k: max(c[-1][k] - c[1][k] for c in o["cycles"]) for k in ("fds", "threads")} \
                if args.cycle > 2 else {}
            o["growth_after_cycle_2"] = growth
            if args.cycle > 2:  # whose threads grew, by name
                second, last = r0["cycles"][1]["thread_names"], r0["cycles"][-1]["thread_names"]
                o["threads_grown_by_name"] = {n: last.get(n, 0) - second.get(n, 0) for n in set(second) | set(last)
                                              if last.get(n, 0) != second.get(n, 0)}
            for c in o["cycles"]:
                for x in c:
                    x.pop("thread_names", None)
            o["ok"] = all(x["ok"] for c in o["cycles"] for x in c) and all(v <= 0 for v in growth.values())
        else:
            fault_at = float(open(results[1] + ".fault").read())
            o["error"] = r0.get("error")
            o["seconds_to_error"] = round(r0["failed_after_s"] - fault_at, 1)
            o["ok"] = r0.get("error") is not None and o["seconds_to_error"] <= args.bound
    except (OSError, ValueError, KeyError) as e:
        o["problem"] = "no result: %s" % e
        with open(os.path.join(args.out_dir, "%s-rank0.log" % tag), errors="replace") as f:
            o["survivor_log_tail"] = f.readlines()[-5:]
        o["ok"] = False
    print(json.dumps(o))
    sys.stdout.flush()
    return o


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--result", default="")
    ap.add_argument("--plugin", default="")
    ap.add_argument("--backend", default="nccl", help="nccl (GPU) or gloo (CPU, to test this script)")
    ap.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    ap.add_argument("--out-dir", default="nccl-shim-faults")
    ap.add_argument("--peer", default="freeze,kill")
    ap.add_argument("--cycle", type=int, default=5, help="communicator life cycles (0 = none)")
    ap.add_argument("--configs", default="jccl,socket")
    ap.add_argument("--bound", type=float, default=30, help="seconds within which the survivor must see an error")
    ap.add_argument("--nccl-debug", default="", help="NCCL_DEBUG for the ranks (default WARN, INFO for cycles)")
    ap.add_argument("--torch-timeout", type=float, default=0,
                    help="PyTorch's own timeout in seconds (0: 10 minutes, so that only NCCL can end a wait)")
    ap.add_argument("--wait", type=float, default=90, help="seconds the survivor keeps trying")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0
    os.makedirs(args.out_dir, exist_ok=True)
    outcomes = []
    for name in [c for c in args.configs.split(",") if c]:
        for mode in [m for m in args.peer.split(",") if m]:
            outcomes.append(run(args, name, mode))
        if args.cycle:
            outcomes.append(run(args, name, "cycle"))
    with open(os.path.join(args.out_dir, "faults.json"), "w") as f:
        json.dump(outcomes, f, indent=1)
    jccl = [o for o in outcomes if o["config"].startswith("jccl")]
    print("RESULT: %s" % ("OK" if jccl and all(o["ok"] for o in jccl) else "FAILED"))
    return 0 if jccl and all(o["ok"] for o in jccl) else 1


if __name__ == "__main__":
    sys.exit(main())
