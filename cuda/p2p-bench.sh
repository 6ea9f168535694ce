#!/usr/bin/env bash
# All-reduce on device buffers between the GPUs of one host, same run: JCCL (one process per GPU,
# `jccl perf -g 1`, its P2P ring through CUDA IPC) against NCCL's all_reduce_perf on the same GPUs
# (NVIDIA nccl-tests, NCCL's P2P transport over NVLink; NVLink multicast off as activate.sh sets).
# Prints busbw per size (out-of-place, GB/s) and the ratio JCCL / NCCL; exits non-zero on any
# wrong element or if JCCL did not take the P2P ring.
#
# Here:   mvn -B -q install -DskipTests && plugins/shim/nccl-tests/pack.sh <nccl-tests checkout>
# There:  cuda/p2p-bench.sh [GPUS=2] [MIN=1M] [MAX=1G]       (carry .device and cli/target/jccl-cli.jar;
#         a kind with 2 GPUs or more)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck disable=SC1091 # written by pack.sh
[ -f .device/activate.sh ] && source .device/activate.sh
command -v java > /dev/null || { echo "no java: run pack.sh here and carry .device" >&2; exit 2; }
gpus=${1:-2}; min=${2:-1M}; max=${3:-1G}
iters=${JCCL_P2P_ITERS:-20}
out=${OUT:-$PWD/p2p-out}
mkdir -p "$out"
have=$(nvidia-smi -L | wc -l)
[ "$have" -ge "$gpus" ] || { echo "$gpus GPUs asked, $have here" >&2; exit 2; }
[ -f cli/target/jccl-cli.jar ] || { echo "no cli/target/jccl-cli.jar: carry it (pack.sh packs the libraries only)" >&2; exit 2; }
nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
plugins/shim/nccl-tests/run.sh build || exit 1
nccl=/tmp/jccl-nccl-tests/bin/all_reduce_perf
timeout 600 "$nccl" -b "$min" -e "$max" -f 2 -g "$gpus" -c 1 -n "$iters" -w 5 > "$out/nccl.txt" 2>&1
echo "NCCL exit $?"
JCCL_JAVA_OPTS=${JCCL_JAVA_OPTS:-} NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT timeout 600 \
  java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp ".device/jccl/*:cli/target/jccl-cli.jar" io.jccl.cli.Jccl \
  perf all_reduce -b "$min" -e "$max" -f 2 -g 1 -np "$gpus" -c 1 -n "$iters" -w 5 > "$out/jccl.txt" 2> "$out/jccl.err"
echo "JCCL exit $?"
grep -h "P2P" "$out/jccl.err" | head -4
python3 - "$out/nccl.txt" "$out/jccl.txt" <<'PY'
import sys
def rows(path):
    r = {}
    for line in open(path):
        f = line.split()
        if len(f) > 8 and f[0].isdigit():
            # size count type redop root time algbw busbw #wrong ...: out-of-place busbw and #wrong
            r[int(f[0])] = (float(f[7]), f[8], f[-1])
    return r
nccl, jccl = rows(sys.argv[1]), rows(sys.argv[2])
bad = 0
print("| size | NCCL busbw | JCCL busbw | JCCL / NCCL | JCCL path |")
print("|---|---|---|---|---|")
for size in sorted(set(nccl) | set(jccl)):
    n, j = nccl.get(size), jccl.get(size)
    if n and n[1] not in ("0", "N/A"): bad += 1
    if j and j[1] not in ("0", "N/A"): bad += 1
    if j and j[2] != "IpcRing": bad += 1
    ratio = "%.2fx" % (j[0] / n[0]) if n and j and n[0] > 0 else "-"
    name = "%d MiB" % (size >> 20) if size >= 1 << 20 else "%d KiB" % (size >> 10)
    print("| %s | %s | %s | %s | %s |" % (name, n[0] if n else "-", j[0] if j else "-", ratio, j[2] if j else "-"))
print("wrong or not P2P:", bad)
sys.exit(1 if bad or not jccl or not nccl else 0)
PY
