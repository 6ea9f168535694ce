#!/usr/bin/env bash
# All-reduce on device buffers between two ranks through the network, same run, on one GPU under CUDA
# MPS (both ranks' kernels run at once, as on two hosts):
#   - JCCL's network FIFO (JCCL_NET_FIFO=1): GPU kernels fill and drain pinned host slots, the proxy
#     moves them through JcclSocket (`jccl perf -g 1 -np 2`, NCCL_SHM_DISABLE=1 so the ranks talk
#     through the network);
#   - JCCL's whole-buffer staging (JCCL_NET_FIFO=0), the path before it;
#   - NCCL's all_reduce_perf with its own Socket transport (two ranks of different NCCL_HOSTID,
#     run.sh's "socket" configuration, NCCL's defaults).
# Prints per size the out-of-place time (us) below 64 KiB and busbw (GB/s) from 64 KiB, and the
# ratios (above 1: the FIFO is faster); exits non-zero on any wrong element or if
# JCCL did not take the network FIFO.
#
# Here:   mvn -B -q install -DskipTests && plugins/shim/nccl-tests/pack.sh <nccl-tests checkout>
# There:  cuda/net-bench.sh [MIN=1M] [MAX=512M]     (carry .device and cli/target/jccl-cli.jar)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck disable=SC1091 # written by pack.sh
[ -f .device/activate.sh ] && source .device/activate.sh
command -v java > /dev/null || { echo "no java: run pack.sh here and carry .device" >&2; exit 2; }
[ -f cli/target/jccl-cli.jar ] || { echo "no cli/target/jccl-cli.jar: carry it (pack.sh packs the libraries only)" >&2; exit 2; }
min=${1:-1M}; max=${2:-512M}
# 100: fewer leave the microsecond rows to chance (20 gave 8 B 29.4 us where 100 gave 18.6, same build)
iters=${JCCL_NET_ITERS:-100}
out=${OUT:-$PWD/net-out}
mkdir -p "$out"

export CUDA_MPS_PIPE_DIRECTORY=/tmp/jccl-mps CUDA_MPS_LOG_DIRECTORY=/tmp/jccl-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if nvidia-cuda-mps-control -d; then
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
else
  echo "CUDA MPS could not start: the ranks are time-sliced and both families slow down" >&2
  unset CUDA_MPS_PIPE_DIRECTORY
fi

OUT=$out JCCL_BENCH_COLLS=all_reduce JCCL_BENCH_ITERS=$iters plugins/shim/nccl-tests/run.sh bench socket > "$out/nccl.out" 2>&1
echo "NCCL exit $?"
for fifo in 1 0; do
  JCCL_NET_FIFO=$fifo NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT timeout 280 \
    java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp ".device/jccl/*:cli/target/jccl-cli.jar" \
    io.jccl.cli.Jccl perf all_reduce -b "$min" -e "$max" -f 2 -g 1 -np 2 -c 1 -n "$iters" -w 5 \
    > "$out/jccl-fifo$fifo.txt" 2> "$out/jccl-fifo$fifo.err"
  echo "JCCL (JCCL_NET_FIFO=$fifo) exit $?"
done
grep -h "network FIFO" "$out/jccl-fifo1.err" | head -2
python3 - "$out/bench-all_reduce-socket.log" "$out/jccl-fifo1.txt" "$out/jccl-fifo0.txt" <<'PY'
import sys
def rows(path):
    r = {}
    try:
        for line in open(path):
            f = line.split()
            if len(f) > 8 and f[0].isdigit():
                # size count type redop root time algbw busbw #wrong ...: out-of-place busbw, #wrong,
                # last column, time; below 64 KiB the time (us) is compared, above it busbw
                small = int(f[0]) < 65536
                r[int(f[0])] = (1.0 / float(f[5]) if small else float(f[7]), f[8], f[-1], float(f[5]))
    except OSError:
        pass
    return r
nccl, fifo, staged = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
bad = 0
print("| size | NCCL Socket | JCCL network FIFO | JCCL staging | FIFO / NCCL | FIFO / staging |")
print("|---|---|---|---|---|---|")
for size in sorted(set(fifo) | set(staged)):
    n, j, s = nccl.get(size), fifo.get(size), staged.get(size)
    for r in (j, s):
        if r and r[1] not in ("0", "N/A"):
            bad += 1
    if j and j[2] != "NetFifo":
        bad += 1
    ratio = lambda a, b: "%.2fx" % (a[0] / b[0]) if a and b and b[0] > 0 else "-"
    name = "%d MiB" % (size >> 20) if size >= 1 << 20 else "%d KiB" % (size >> 10) if size >= 1024 else "%d B" % size
    cell = lambda r: "-" if not r else ("%.1f us" % r[3] if size < 65536 else "%.2f" % r[0])
    print("| %s | %s | %s | %s | %s | %s |" % (name, cell(n), cell(j), cell(s), ratio(j, n), ratio(j, s)))
print("wrong, or not the network FIFO:", bad)
sys.exit(1 if bad or not fifo or not staged else 0)
PY
