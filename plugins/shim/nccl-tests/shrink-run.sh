#!/usr/bin/env bash
# NCCL's ncclCommShrink after a rank dies or freezes, JcclSocket (the shim) against NCCL's Socket,
# 3 ranks on GPU 0 (different NCCL_HOSTID), under CUDA MPS. On the GPU machine:
#   source .device/activate.sh && plugins/shim/nccl-tests/shrink-run.sh      (carry .device)
# Results in $OUT/shrink (one log per configuration and rank) and a summary on stdout.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-$PWD/shrink-out}/shrink
mkdir -p "$out"
grep -q ncclCommShrink /usr/include/nccl.h || { echo "this NCCL has no ncclCommShrink"; exit 2; }
gcc -O2 -o /tmp/jccl-shrink-check "$here/shrink_check.c" -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
  -lcudart -lnccl -ldl || exit 1
# SHRINK_NCCL_DIR: run on another libnccl.so.2 than the system's (e.g. PyTorch's own copy), same API.
[ -n "${SHRINK_NCCL_DIR:-}" ] && export LD_LIBRARY_PATH=$SHRINK_NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_MPS_PIPE_DIRECTORY=/tmp/jccl-mps CUDA_MPS_LOG_DIRECTORY=/tmp/jccl-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && trap 'echo quit | nvidia-cuda-mps-control' EXIT
n=3 victim=2 die_at=5 bound=${SHRINK_BOUND_S:-60}
# SHRINK_NETS, SHRINK_HOWS narrow the runs; SHRINK_BLOCKING=1, SHRINK_FLAGS=0|1 and SHRINK_REVOKE=1 reach
# the program.
for net in ${SHRINK_NETS:-jccl socket}; do
  for how in ${SHRINK_HOWS:-kill freeze}; do
    tag=$net-$how-b${SHRINK_BLOCKING:-0}-f${SHRINK_FLAGS:-d}-r${SHRINK_REVOKE:-0}
    idfile=/tmp/jccl-shrink-$tag.id; rm -f "$idfile"
    pids=()
    for r in $(seq 0 $((n - 1))); do
      if [ $net = jccl ]; then
        env NCCL_NET_PLUGIN="$root/.device/jccl/libnccl-net.so" NCCL_NET=JcclSocket JCCL_JAVA_HOME="$JAVA_HOME" \
          NCCL_HOSTID=host-$r NCCL_IB_DISABLE=1 NCCL_DEBUG=WARN \
          /tmp/jccl-shrink-check $r $n "$idfile" $victim $die_at $how "$bound" > "$out/$tag-r$r.log" 2>&1 &
      else
        env NCCL_NET_PLUGIN=none NCCL_NET=Socket NCCL_HOSTID=host-$r NCCL_IB_DISABLE=1 NCCL_DEBUG=WARN \
          /tmp/jccl-shrink-check $r $n "$idfile" $victim $die_at $how "$bound" > "$out/$tag-r$r.log" 2>&1 &
      fi
      pids+=($!)
    done
    for r in 0 1; do
      timeout $((bound + 60)) tail --pid=${pids[$r]} -f /dev/null
      kill -9 "${pids[$r]}" 2>/dev/null
    done
    kill -9 "${pids[2]}" 2>/dev/null; kill -CONT "${pids[2]}" 2>/dev/null
    wait 2>/dev/null
    echo "== $tag"
    grep -hE 'NCCL [0-9]|DETECTED|HANG|REVOKE|SHRUNK|OK:|FAILED|exiting|freezing' "$out/$tag"-r*.log | sed 's/^/   /'
  done
done
