#!/usr/bin/env python3
"""PyTorch's shrink_group (ncclCommShrink underneath) after a rank dies, through the shim with
JcclSocket and through NCCL's own Socket, on one GPU (3 ranks, each its own NCCL_HOSTID, so that
NCCL goes through the network plugin).

Every rank loops a checked all_reduce; rank 2 kills itself (SIGKILL) or stops (SIGSTOP) at
iteration 5. --detect nccl: the survivors run iteration 5 and poll the in-flight work until
PyTorch reports NCCL's error, then call torch.distributed.shrink_group([2],
shrink_flags=SHRINK_ABORT). --detect oob: the survivors learn of the death out of band (a file the
victim writes, as a job's health check would tell them) before they start iteration 5, and call
shrink_group([2]) (SHRINK_DEFAULT) on a communicator that saw no error. Then 5 checked all_reduces
on the new group. One line per phase and rank, with times:

  nccl_shim_shrink.py --plugin .device/jccl/libnccl-net.so --out-dir DIR [--configs jccl,socket]
                      [--peer kill,freeze] [--detect nccl,oob] [--wait 40]
"""
import argparse
import inspect
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nccl_shim_check import configuration, free_port, rank_environment  # noqa: E402

N = 3
VICTIM = 2
DIE_AT = 5


def worker(args):
    import torch
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d
    from datetime import timedelta
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(0)
    log = []

    def say(text):
        line = "rank %d: %s" % (rank, text)
        print(line, flush=True)
        log.append(line)

    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % args.port, rank=rank, world_size=N,
                            timeout=timedelta(minutes=10), device_id=torch.device("cuda:0"))
    if rank == 0:
        say("torch %s, NCCL %s, shrink_group%s" % (torch.__version__, ".".join(map(str, torch.cuda.nccl.version())),
                                                  inspect.signature(dist.shrink_group)))
    t = torch.empty(1 << 16, dtype=torch.float32, device="cuda:0")
    detected = None
    for it in range(1000):
        if rank == VICTIM and it == DIE_AT:
            say("%s at iteration %d" % ("freezing" if args.peer == "freeze" else "exiting", it))
            with open(os.path.join(os.path.dirname(args.result), "victim-gone-%d" % args.port), "w") as f:
                f.write(str(time.time()))
            os.kill(os.getpid(), signal.SIGSTOP if args.peer == "freeze" else signal.SIGKILL)
        if args.detect == "oob" and it == DIE_AT:
            gone = os.path.join(os.path.dirname(args.result), "victim-gone-%d" % args.port)
            while not os.path.exists(gone):
                time.sleep(0.01)
            time.sleep(0.5)
            detected = time.time()
            say("TOLD out of band before iteration %d that rank %d is gone" % (it, VICTIM))
            break
        t.fill_(rank + 1 + it)
        start = time.time()
        try:
            work = dist.all_reduce(t, async_op=True)
            while not work.is_completed() and time.time() - start < args.wait:
                time.sleep(0.01)
            if not work.is_completed():
                say("HANG: iteration %d not done and no error after %.0f s" % (it, args.wait))
                detected = time.time()
                break
            work.wait()
            torch.cuda.synchronize()
            want = sum(r + 1 + it for r in range(N))
            if not bool((t == want).all().item()):
                say("WRONG at iteration %d" % it)
                break
        except Exception as e:  # PyTorch's error, with NCCL's result inside
            detected = time.time()
            say("DETECTED at iteration %d after %.2f s: %s" % (it, detected - start, str(e).splitlines()[0][:200]))
            break
    if detected is not None:
        t0 = time.time()
        try:
            kwargs = {}
            if "shrink_flags" in inspect.signature(dist.shrink_group).parameters:
                kwargs["shrink_flags"] = c10d.SHRINK_ABORT if args.detect == "nccl" else c10d.SHRINK_DEFAULT
            small = dist.shrink_group([VICTIM], **kwargs)
            size = dist.get_world_size(small)
            me = dist.get_rank(small)
            say("SHRUNK to rank %d of %d in %.2f s" % (me, size, time.time() - t0))
            ok = True
            for k in range(5):
                t.fill_(me + 1 + k)
                dist.all_reduce(t, group=small)
                torch.cuda.synchronize()
                ok &= bool((t == sum(r + 1 + k for r in range(size))).all().item())
            say("OK: 5 checked all-reduces on the shrunk group" if ok else "WRONG after shrink")
        except Exception as e:
            say("SHRINK FAILED after %.2f s: %s: %s" % (time.time() - t0, type(e).__name__,
                                                        str(e).splitlines()[0][:300]))
    with open(args.result, "w") as f:
        json.dump(log, f)
    sys.stdout.flush()
    os._exit(0)


def run(args, name, peer):
    env_extra, _, _ = configuration(name, args.plugin)
    env_extra.pop("NCCL_DEBUG_SUBSYS", None)
    env_extra["NCCL_DEBUG"] = "WARN"
    port = free_port()
    procs = []
    for rank in range(N):
        env = rank_environment(env_extra, rank, args.java_home)
        env.update({"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0", "WORLD_SIZE": str(N)})
        log = open(os.path.join(args.out_dir, "shrink-%s-%s-%s-rank%d.log" % (name, peer, args.detect, rank)), "w")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--port", str(port), "--peer", peer,
               "--wait", str(args.wait), "--detect", args.detect,
               "--result", os.path.join(args.out_dir, "shrink-%s-%s-%s-rank%d.json" % (name, peer, args.detect, rank))]
        procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))
    deadline = time.time() + args.wait + 90
    while any(p.poll() is None for p in procs[:VICTIM]) and time.time() < deadline:
        time.sleep(0.2)
    for p in procs:
        if p.poll() is None:
            p.kill()
    print("== %s, rank %d %s, detected by %s" % (name, VICTIM, "frozen" if peer == "freeze" else "killed",
                                                 "NCCL" if args.detect == "nccl" else "the job (out of band)"))
    for rank in range(N):
        path = os.path.join(args.out_dir, "shrink-%s-%s-%s-rank%d.json" % (name, peer, args.detect, rank))
        lines = json.load(open(path)) if os.path.exists(path) else ["rank %d: no result (killed or hung)" % rank]
        for line in lines:
            print("   " + line)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--plugin")
    ap.add_argument("--out-dir", default="shrink-out")
    ap.add_argument("--configs", default="jccl,socket")
    ap.add_argument("--peer", default="kill")
    ap.add_argument("--detect", default="nccl")
    ap.add_argument("--wait", type=float, default=40)
    ap.add_argument("--port", type=int)
    ap.add_argument("--result")
    ap.add_argument("--java-home", default=os.environ.get("JAVA_HOME"))
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    os.makedirs(args.out_dir, exist_ok=True)
    detects = args.detect
    for detect in detects.split(","):
        args.detect = detect
        for peer in args.peer.split(","):
            for name in args.configs.split(","):
                run(args, name, peer)


if __name__ == "__main__":
    main()
