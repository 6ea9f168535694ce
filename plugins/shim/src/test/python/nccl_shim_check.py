#!/usr/bin/env python3
"""Real NCCL running a Java transport through the JCCL shim, checked and measured with PyTorch.

Two ranks share one GPU: NCCL refuses that on one host, but takes NCCL_HOSTID as the host's
identity, so ranks with different NCCL_HOSTID values talk through NCCL's network layer, i.e.
through the net plugin NCCL_NET names: the JCCL shim (NCCL_NET_PLUGIN=.../libnccl-net.so,
NCCL_NET=JcclSocket) or NCCL's own Socket (NCCL_NET=Socket).

  check: all_reduce, all_gather, reduce_scatter, broadcast and send/recv on int32 data whose
         exact results are known, for sizes from 4 B to 1 GiB; fails on any wrong element.
  bench: float32 all_reduce busbw (nccl-tests' formula; 2 ranks: busbw = algbw) from 64 MiB to
         1 GiB, for each configuration in turn within one run.

Every configuration runs in fresh processes (NCCL reads its variables once per process); the NCCL
log of each rank is kept, and the script asserts which network and which plugin version NCCL took.

usage (on the GPU machine):
  python3 nccl_shim_check.py --plugin /path/libnccl-net.so --out-dir DIR \\
      --check jccl,jccl-v6 --bench socket,jccl,socket@ch8,jccl@ch8
  python3 nccl_shim_check.py --backend gloo ...   (no GPU: the script's own logic, on CPU)
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

CHECK_SIZES = [4, 64, 1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20, 1 << 30]
BENCH_SIZES = [64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30]


# ---- one rank ----------------------------------------------------------------------------------

def pattern(torch, count, rank, device):
    """int32 values whose sums over two ranks stay exact."""
    base = torch.arange(count, dtype=torch.int64, device=device)
    return ((base * 7 + 13 * (rank + 1)) % 100003).to(torch.int32)


def wrong(torch, got, expected):
    return int((got != expected).sum().item())


def run_checks(torch, dist, rank, device, sizes, sync):
    peer = 1 - rank
    results = []

    def record(op, nbytes, got, expected):
        results.append({"op": op, "bytes": nbytes, "wrong": wrong(torch, got, expected)})

    for nbytes in sizes:
        count = max(1, nbytes // 4)
        mine = pattern(torch, count, rank, device)
        theirs = pattern(torch, count, peer, device)

        t = mine.clone()
        dist.all_reduce(t)
        sync()
        record("all_reduce", nbytes, t, mine + theirs)
        del t

        half = max(1, count // 2)
        out = torch.empty(2 * half, dtype=torch.int32, device=device)
        dist.all_gather_into_tensor(out, mine[:half].contiguous())
        sync()
        first, second = (mine[:half], theirs[:half]) if rank == 0 else (theirs[:half], mine[:half])
        record("all_gather", nbytes, out, torch.cat([first, second]))
        del out

        src = mine[: 2 * half] if count >= 2 else torch.cat([mine, mine])
        other = theirs[: 2 * half] if count >= 2 else torch.cat([theirs, theirs])
        out = torch.empty(half, dtype=torch.int32, device=device)
        dist.reduce_scatter_tensor(out, src.contiguous())
        sync()
        lo, hi = rank * half, (rank + 1) * half
        record("reduce_scatter", nbytes, out, src[lo:hi] + other[lo:hi])
        del out, src, other

        for root in (0, 1):
            t = mine.clone() if rank == root else torch.zeros(count, dtype=torch.int32, device=device)
            dist.broadcast(t, src=root)
            sync()
            record("broadcast(root %d)" % root, nbytes, t, mine if rank == root else theirs)
            del t

        got = torch.zeros(count, dtype=torch.int32, device=device)
        ops = [dist.P2POp(dist.isend, mine, peer), dist.P2POp(dist.irecv, got, peer)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        sync()
        record("send/recv", nbytes, got, theirs)
        del got, mine, theirs
        if device != "cpu":
            torch.cuda.empty_cache()
    return results


def run_bench(torch, dist, rank, device, sizes, sync):
    results = []
    for nbytes in sizes:
        t = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        iters = 10 if nbytes <= 256 << 20 else 6 if nbytes <= 512 << 20 else 4
        for _ in range(2):
            dist.all_reduce(t)
        sync()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        sync()
        seconds = (time.perf_counter() - start) / iters
        algbw = nbytes / seconds / 1e9
        results.append({"bytes": nbytes, "seconds": seconds, "algbw": algbw, "busbw": algbw * 2 * (2 - 1) / 2})
        del t
    return results


def run_communicator_life_cycle(torch, dist, rank, device, sync, args, kwargs):
    """A second communicator beside the first (NCCL 2.28+ calls the plugin's init per communicator),
    then every communicator destroyed (NCCL unloads the plugin) and a new one created (it loads it
    again): each checked with an all_reduce."""
    from datetime import timedelta
    results = []
    count = 1 << 20
    mine, theirs = pattern(torch, count, rank, device), pattern(torch, count, 1 - rank, device)
    group = dist.new_group(ranks=[0, 1])
    t = mine.clone()
    dist.all_reduce(t, group=group)
    sync()
    results.append({"op": "all_reduce, second communicator", "bytes": 4 * count, "wrong": wrong(torch, t, mine + theirs)})
    dist.destroy_process_group(group)
    dist.destroy_process_group()
    dist.init_process_group(args.backend, init_method="tcp://127.0.0.1:%d" % (args.port + 1), rank=rank, world_size=2,
                            timeout=timedelta(minutes=10), **kwargs)
    t = mine.clone()
    dist.all_reduce(t)
    sync()
    results.append({"op": "all_reduce, after all communicators were destroyed", "bytes": 4 * count,
                    "wrong": wrong(torch, t, mine + theirs)})
    return results


def worker(args):
    import torch
    import torch.distributed as dist
    from datetime import timedelta

    rank = int(os.environ["RANK"])
    if args.backend == "nccl":
        torch.cuda.set_device(0)
        device = "cuda:0"
        sync = torch.cuda.synchronize
    else:
        device = "cpu"
        sync = lambda: None  # noqa: E731
    kwargs = {"device_id": torch.device(device)} if args.backend == "nccl" else {}
    dist.init_process_group(args.backend, init_method="tcp://127.0.0.1:%d" % args.port, rank=rank, world_size=2,
                            timeout=timedelta(minutes=10), **kwargs)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.mode == "check":
        out = run_checks(torch, dist, rank, device, sizes, sync)
        try:
            out += run_communicator_life_cycle(torch, dist, rank, device, sync, args, kwargs)
        except Exception as e:  # recorded as a failed check; the results above are kept
            out.append({"op": "communicator life cycle", "bytes": 0, "wrong": 1, "error": str(e)[:500]})
            write_result(args, rank, torch, out)
            raise
    else:
        out = run_bench(torch, dist, rank, device, sizes, sync)
    dist.barrier()
    dist.destroy_process_group()
    write_result(args, rank, torch, out)


def write_result(args, rank, torch, out):
    info = {"rank": rank, "torch": torch.__version__, "results": out}
    if args.backend == "nccl":
        v = torch.cuda.nccl.version()
        info["nccl"] = ".".join(str(x) for x in v) if isinstance(v, (tuple, list)) else str(v)
        info["gpu"] = torch.cuda.get_device_name(0)
    with open(args.result, "w") as f:
        json.dump(info, f)


# ---- the orchestrator --------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def configuration(name, plugin):
    """The environment of one configuration: NET[:TxS][@chN][+VAR=VALUE...], NET = jccl, jccl-vN or socket.

    TxS sets NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (read by both JcclSocket and NCCL's Socket);
    @chN sets NCCL_MIN_NCHANNELS=N (NCCL's channels, each with its own connections and GPU block);
    +VAR=VALUE sets any other variable."""
    env = {"NCCL_IB_DISABLE": "1", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET"}
    name, *extra = name.split("+")
    for assignment in extra:
        var, _, value = assignment.partition("=")
        env[var] = value
    name, _, channels = name.partition("@")
    if channels:
        env["NCCL_MIN_NCHANNELS"] = channels[len("ch"):] if channels.startswith("ch") else channels
    base, _, layout = name.partition(":")
    version = None
    if base.startswith("jccl"):
        env["NCCL_NET_PLUGIN"] = plugin
        env["NCCL_NET"] = "JcclSocket"
        if base.startswith("jccl-v"):
            version = base[len("jccl-v"):]
            env["JCCL_SHIM_MAX_API_VERSION"] = version
        expected = "JcclSocket"
    elif base == "socket":
        env["NCCL_NET_PLUGIN"] = "none"
        env["NCCL_NET"] = "Socket"
        expected = "Socket"
    else:
        raise SystemExit("unknown configuration " + name)
    if layout:
        threads, streams = layout.lower().split("x")
        env["NCCL_SOCKET_NTHREADS"] = threads
        env["NCCL_NSOCKS_PERTHREAD"] = streams
    return env, expected, version


def rank_environment(env_extra, rank, java_home):
    """One rank's environment: ours without NCCL's variables (NVLink multicast stays off), then the
    configuration's, then the rank's own host id, so that NCCL takes the network between the two."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_") or k == "NCCL_NVLS_ENABLE"}
    env.update(env_extra)
    env.update({"RANK": str(rank), "NCCL_HOSTID": "jccl-host-%d" % rank, "PYTHONUNBUFFERED": "1"})
    if java_home:
        env["JCCL_JAVA_HOME"] = java_home
    return env


def run_pair(args, name, mode, sizes):
    env_extra, expected, version = configuration(name, args.plugin)
    port = free_port()
    procs = []
    logs = []
    tag = re.sub(r"[^A-Za-z0-9_.-]", "_", "%s-%s" % (mode, name))
    for rank in (0, 1):
        env = rank_environment(env_extra, rank, args.java_home)
        log = os.path.join(args.out_dir, "%s-rank%d.log" % (tag, rank))
        logs.append(log)
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--mode", mode, "--backend", args.backend,
               "--port", str(port), "--sizes", ",".join(str(s) for s in sizes),
               "--result", os.path.join(args.out_dir, "%s-rank%d.json" % (tag, rank))]
        procs.append(subprocess.Popen(cmd, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT))
    deadline = time.time() + args.timeout
    codes = [None, None]
    while None in codes and time.time() < deadline:
        for i, p in enumerate(procs):
            codes[i] = p.poll()
        if any(c not in (None, 0) for c in codes):
            break
        time.sleep(0.2)
    for i, p in enumerate(procs):
        if p.poll() is None:
            p.kill()
            codes[i] = "killed"
        else:
            codes[i] = p.returncode
    outcome = {"config": name, "mode": mode, "exit": codes, "logs": logs,
               "seconds": round(time.time() - deadline + args.timeout, 1)}
    text = open(logs[0]).read()
    plugin = re.findall(r"Loaded net plugin (\S+) \(v(\d+)\)", text)
    network = re.findall(r"(?:Assigned NET plugin|Using network) (\S+)", text)
    outcome["plugin"] = plugin[0] if plugin else None
    channels = re.findall(r"(\d+) coll channels", text)
    outcome["channels"] = int(channels[0]) if channels else None
    outcome["network"] = network[0] if network else None
    if args.backend == "nccl" and outcome["network"] != expected:
        outcome["problem"] = "NCCL used network %s, expected %s" % (outcome["network"], expected)
    elif args.backend == "nccl" and version and (not plugin or plugin[0][1] != version):
        outcome["problem"] = "NCCL loaded %s, expected ncclNet v%s" % (plugin, version)
    try:
        results = [json.load(open(os.path.join(args.out_dir, "%s-rank%d.json" % (tag, r)))) for r in (0, 1)]
        outcome["ranks"] = results
        outcome["nccl"] = results[0].get("nccl")
    except (OSError, ValueError):
        outcome.setdefault("problem", "a rank produced no result (exit codes %s); see %s" % (codes, logs))
        for log in logs:
            sys.stdout.write("---- tail of %s\n" % log)
            sys.stdout.write("".join(open(log).readlines()[-30:]))
    return outcome


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="check")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--sizes", default="")
    ap.add_argument("--result", default="")
    ap.add_argument("--backend", default="nccl", help="nccl (GPU) or gloo (CPU, to test this script)")
    ap.add_argument("--plugin", default="", help="absolute path of the shim's libnccl-net.so")
    ap.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""), help="JDK 22+ for the shim")
    ap.add_argument("--out-dir", default="nccl-shim-out")
    ap.add_argument("--check", default="jccl,jccl-v6", help="configurations to check (comma list)")
    ap.add_argument("--check-sizes", default=",".join(str(s) for s in CHECK_SIZES))
    ap.add_argument("--bench", default="socket,jccl,socket@ch8,jccl@ch8",
                    help="configurations to measure, in this order")
    ap.add_argument("--bench-sizes", default=",".join(str(s) for s in BENCH_SIZES))
    ap.add_argument("--baseline", default="socket", help="the configuration ratios are taken against")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per configuration")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0

    os.makedirs(args.out_dir, exist_ok=True)
    if args.backend == "nccl" and not os.path.isabs(args.plugin):
        raise SystemExit("--plugin must be the absolute path of libnccl-net.so")
    summary = {"checks": [], "bench": []}
    failed = False
    check_sizes = [int(s) for s in args.check_sizes.split(",") if s]
    bench_sizes = [int(s) for s in args.bench_sizes.split(",") if s]
    for name in [c for c in args.check.split(",") if c]:
        o = run_pair(args, name, "check", check_sizes)
        bad = [r for rank in o.get("ranks", []) for r in rank["results"] if r["wrong"]]
        checked = sum(len(rank["results"]) for rank in o.get("ranks", []))
        o["wrong_results"] = bad
        o["ok"] = not bad and "problem" not in o and checked > 0
        failed |= not o["ok"]
        summary["checks"].append({k: v for k, v in o.items() if k != "ranks"} | {"results_checked": checked})
        print("check %-10s NCCL %s network=%s plugin=%s: %s (%d results checked, %d wrong, %.0f s)%s" % (
            name, o.get("nccl"), o["network"], o["plugin"], "OK" if o["ok"] else "FAILED", checked, len(bad),
            o["seconds"],
            "" if "problem" not in o else " - " + o["problem"]))
        for r in bad[:10]:
            print("   wrong: %s %d B: %s" % (r["op"], r["bytes"], r.get("error") or "%d elements" % r["wrong"]))
        sys.stdout.flush()
    rows = {}
    for name in [c for c in args.bench.split(",") if c]:
        o = run_pair(args, name, "bench", bench_sizes)
        if "ranks" in o:
            rows[name] = {r["bytes"]: r for r in o["ranks"][0]["results"]}
        else:
            failed = True
        summary["bench"].append({k: v for k, v in o.items() if k != "ranks"} | {"results": rows.get(name)})
        print("bench %-16s NCCL %s network=%s plugin=%s channels=%s (%.0f s)%s" % (
            name, o.get("nccl"), o["network"], o["plugin"], o.get("channels"), o["seconds"],
            "" if "problem" not in o else " - " + o["problem"]))
        sys.stdout.flush()
    if rows:
        base = args.baseline if args.baseline in rows else list(rows)[-1]
        ref = 256 << 20 if (256 << 20) in bench_sizes else bench_sizes[len(bench_sizes) // 2]
        channels = {o["config"]: o.get("channels") for o in summary["bench"]}
        print("\nall_reduce busbw (GB/s), 2 ranks; ratio = busbw / busbw of %s at %d MiB, same run" % (base, ref >> 20))
        print("| configuration | channels | " + " | ".join("%d MiB" % (b >> 20) for b in bench_sizes)
              + " | ratio at %d MiB |" % (ref >> 20))
        print("|---|---|" + "---|" * (len(bench_sizes) + 1))
        for n, r in rows.items():
            vals = [r.get(b, {}).get("busbw") for b in bench_sizes]
            mine, theirs = r.get(ref, {}).get("busbw"), rows[base].get(ref, {}).get("busbw")
            print("| %s | %s | " % (n, channels.get(n)) + " | ".join("%.2f" % v if v else "-" for v in vals)
                  + " | %s |" % ("%.2f" % (mine / theirs) if mine and theirs else "-"))
    for o in summary["checks"] + summary["bench"]:
        if o.get("ranks") is None and "ranks" in o:
            del o["ranks"]
    with open(os.path.join(args.out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    print("\nRESULT: %s" % ("FAILED" if failed else "OK"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
