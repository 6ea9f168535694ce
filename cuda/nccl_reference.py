#!/usr/bin/env python3
"""NCCL's results on known inputs, for JCCL's device collectives to be compared with bit for bit.

Two ranks (processes) on one GPU with different NCCL_HOSTID values, so NCCL runs them through its
network layer (NCCL's own Socket), as nccl-tests does on this machine. For every type PyTorch hands
NCCL (float32, float64, float16, bfloat16, int8, uint8, int32, int64) and every operation (sum,
prod, max, min, avg; avg on floats only: PyTorch refuses it on integers), each rank all-reduces
seeded random data and writes
  DIR/in-<type>-<rank>.bin     the rank's input (raw, little-endian)
  DIR/nccl-<type>-<op>.bin     NCCL's result (rank 0's; the script checks rank 1's is the same)
With two ranks every element is one operation on two values, so the result does not depend on
the order of the reduction: an implementation that rounds as NCCL does gives the same bits.
NcclReferenceTest (cuda/nccl-compare.sh) then runs JCCL on the same inputs.

usage: python3 nccl_reference.py DIR [COUNT]
"""
import os
import subprocess
import sys

TYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64"]
OPS = ["sum", "prod", "max", "min", "avg"]


def inputs(torch, dtype_name, rank, count):
    dtype = getattr(torch, dtype_name)
    g = torch.Generator().manual_seed(1000 * TYPES.index(dtype_name) + rank)
    if dtype.is_floating_point:
        # a wide range of magnitudes, signs, and values whose sums round
        x = torch.randn(count, generator=g, dtype=torch.float64) * torch.exp2(
            torch.randint(-8, 9, (count,), generator=g).to(torch.float64))
        if dtype in (torch.float16, torch.bfloat16):
            x = x.clamp(-60000, 60000)
        return x.to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (count,), generator=g, dtype=torch.int64).to(dtype)


def rank_main(out, count):
    import torch
    import torch.distributed as dist
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29731", rank=rank, world_size=2)
    ops = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX,
           "min": dist.ReduceOp.MIN, "avg": dist.ReduceOp.AVG}
    for t in TYPES:
        x = inputs(torch, t, rank, count)
        x.view(torch.uint8).numpy().tofile(os.path.join(out, "in-%s-%d.bin" % (t, rank)))
        for op in OPS:
            if op == "avg" and not x.dtype.is_floating_point:
                continue
            y = x.cuda()
            dist.all_reduce(y, op=ops[op])
            torch.cuda.synchronize()
            mine = y.cpu()
            other = [torch.empty_like(mine).cuda() for _ in range(2)]
            dist.all_gather(other, y)
            same = torch.equal(other[0].cpu().view(torch.uint8), other[1].cpu().view(torch.uint8))
            if not same:
                print("rank %d: NCCL's ranks differ on %s %s" % (rank, t, op), flush=True)
            if rank == 0:
                mine.view(torch.uint8).numpy().tofile(os.path.join(out, "nccl-%s-%s.bin" % (t, op)))
    dist.destroy_process_group()
    print("rank %d: done (NCCL %s, PyTorch %s)" % (rank, ".".join(map(str, torch.cuda.nccl.version())),
                                                  torch.__version__), flush=True)


def main():
    if "RANK" in os.environ:
        rank_main(sys.argv[1], int(sys.argv[2]))
        return
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else (1 << 20) + 3
    os.makedirs(out, exist_ok=True)
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), NCCL_HOSTID="jccl-ref-%d" % rank, NCCL_NET="Socket",
                   NCCL_NET_PLUGIN="none", NCCL_IB_DISABLE="1")
        procs.append(subprocess.Popen([sys.executable, __file__, out, str(count)], env=env))
    codes = [p.wait(timeout=600) for p in procs]
    with open(os.path.join(out, "count"), "w") as f:
        f.write(str(count))
    sys.exit(max(codes))


if __name__ == "__main__":
    main()
