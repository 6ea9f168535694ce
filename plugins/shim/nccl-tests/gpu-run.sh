#!/usr/bin/env bash
# Everything the shim's GPU check needs, in one device call of at most 10 minutes (the device tool's
# limit per command): the nccl-tests check, PyTorch with a frozen and a killed peer and with
# communicators destroyed and re-created (NCCL's Socket beside it), the benchmark beside NCCL's
# Socket swept to its best, warm 8-byte latency, and the box's ceilings. Each step has its own time limit,
# so a hang in one still leaves the others' results. Results go to $OUT/r.tgz (one file: the device
# tool brings back at most 8).
#
# Here:   plugins/shim/nccl-tests/pack.sh [NCCL_TESTS_CHECKOUT]
# There:  source .device/activate.sh && plugins/shim/nccl-tests/gpu-run.sh      (carry .device)
#
# JCCL_GPU_STEPS (default "aot check faults bench lat ceilings"; "cold" adds the cold small sizes
# with and without the shim's AOT cache beside NCCL's Socket; "steady" adds 16 to 64 MiB with
# JCCL_GPU_STEADY_ITERS (300) timed iterations a size instead of the bench's 15) runs some of the
# steps, e.g. to split them over two calls when the bench sweeps more configurations
# (JCCL_GPU_BENCH, JCCL_GPU_LAT) than fit beside the rest; JCCL_GPU_BENCH_TIMEOUT (200),
# JCCL_GPU_STEADY_TIMEOUT (200) and JCCL_GPU_LAT_TIMEOUT (100) bound those steps, in seconds.
# bench, steady and lat train the AOT cache first where none is there (a device call starts on a
# fresh machine): without it the first size of each run is timed while the shim's JVM still
# compiles (thirty-ninth session: 16 MiB all_reduce out-of-place 3.6 to 6.2 GB/s cold against
# 7.4 to 9.6 with the cache, 4 rounds). JCCL_GPU_AOT=off measures them cold.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
cd "$root"
here=plugins/shim/nccl-tests
faults=plugins/shim/src/test/python/nccl_shim_faults.py
out=${OUT:-$PWD/gpu-run-out}/r
mkdir -p "$out"
plugin=$PWD/.device/jccl/libnccl-net.so
step() { echo "== $1 ($(date +%T))"; }
steps=" ${JCCL_GPU_STEPS:-aot check faults bench lat ceilings} "
wants() { [[ $steps == *" $1 "* ]]; }

# The measuring steps time the shim as a user with a trained cache runs it (see the header).
if ! wants aot && [ "${JCCL_GPU_AOT:-on}" != off ] && [ ! -s "$(dirname "$plugin")/jccl-shim.aot" ] \
    && { wants bench || wants steady || wants lat; }; then
  steps="$steps aot "
fi
if wants aot; then
step "the shim's AOT cache: a training run (every jccl run after it starts its JVM with the cache)"
OUT=$out timeout 200 $here/run.sh aot-train > "$out/aot-stdout.txt" 2>&1
echo "aot-train exit $?"; cut -c1-300 "$out/aot-stdout.txt"
fi

if wants cold; then
step "cold: 8 B to 1 MiB as a user's first run meets them (-w 5 -n 20), rounds in turn"
cold_configs=${JCCL_GPU_COLD:-"socket jccl jccl+JCCL_SHIM_AOT_CACHE=off"}
# shellcheck disable=SC2086 # a list of configurations
JCCL_MPS=1 JCCL_ROUNDS=${JCCL_COLD_ROUNDS:-3} JCCL_BENCH_MAX=${JCCL_COLD_MAX:-1M} JCCL_NCCL_TESTS_TIMEOUT=40 OUT=$out/cold \
  timeout "${JCCL_GPU_COLD_TIMEOUT:-300}" $here/run.sh bench $cold_configs > "$out/cold-stdout.txt" 2>&1
python3 $here/cold_table.py "$out"/cold/r* | tee "$out/cold.txt"
fi

if wants check; then
step "check: v6, the newest NCCL takes, and v12; six collectives each"
JCCL_MPS=1 JCCL_NCCL_TESTS_TIMEOUT=40 JCCL_CHECK_VERSIONS="${JCCL_CHECK_VERSIONS:-6 11 12}" OUT=$out timeout 90 $here/run.sh check \
  > "$out/check-stdout.txt" 2>&1
echo "check exit $?"; grep -E '^v|failures' "$out/check-stdout.txt"
fi

if wants faults; then

step "PyTorch through the shim: frozen and killed peer, 4 communicator life cycles"
timeout 130 python3 $faults --plugin "$plugin" --out-dir "$out/faults-jccl" --configs jccl --peer freeze,kill \
  --cycle 4 --bound 20 --wait 30 > "$out/faults-jccl.txt" 2>&1
pkill -9 -f nccl_shim_faults; cut -c1-400 "$out/faults-jccl.txt"

step "PyTorch on NCCL's Socket (the baseline): frozen and killed peer"
timeout 110 python3 $faults --plugin "$plugin" --out-dir "$out/faults-socket" --configs socket --peer freeze,kill \
  --cycle 0 --wait 35 > "$out/faults-socket.txt" 2>&1
pkill -9 -f nccl_shim_faults; cut -c1-400 "$out/faults-socket.txt"
fi

if wants bench; then

step "bench under MPS: 16 MiB to 512 MiB, NCCL's Socket swept (threads x sockets, channels, P2P chunk)"
chunk=NCCL_P2P_NET_CHUNKSIZE=524288
configs=${JCCL_GPU_BENCH:-"jccl jccl@ch8 jccl+$chunk socket:2x2 socket:2x2+$chunk socket:4x4@ch8 socket:8x2@ch16"}
# shellcheck disable=SC2086 # a list of configurations
JCCL_MPS=1 JCCL_NCCL_TESTS_TIMEOUT=60 JCCL_BENCH_ITERS=15 OUT=$out timeout "${JCCL_GPU_BENCH_TIMEOUT:-200}" $here/run.sh bench $configs > "$out/bench-stdout.txt" 2>&1
fi
if wants steady; then
configs_steady=${JCCL_GPU_STEADY:-"jccl@ch8 socket:2x2 socket:2x2+NCCL_P2P_NET_CHUNKSIZE=524288"}
step "steady under MPS: 16 to 64 MiB, ${JCCL_GPU_STEADY_ITERS:-300} timed iterations a size"
# shellcheck disable=SC2086 # a list of configurations
JCCL_MPS=1 JCCL_NCCL_TESTS_TIMEOUT=90 JCCL_BENCH_MIN=16M JCCL_BENCH_MAX=64M JCCL_BENCH_ITERS=${JCCL_GPU_STEADY_ITERS:-300} OUT=$out/steady \
  timeout "${JCCL_GPU_STEADY_TIMEOUT:-200}" $here/run.sh bench $configs_steady > "$out/steady-stdout.txt" 2>&1
tail -25 "$out/steady-stdout.txt"
fi
if wants lat; then
step "8 B warm, under MPS"
lat_configs=${JCCL_GPU_LAT:-"jccl jccl@ch8 socket:2x2 socket:4x4@ch8 socket:8x2@ch16"}
# shellcheck disable=SC2086 # a list of configurations
JCCL_MPS=1 JCCL_NCCL_TESTS_TIMEOUT=40 OUT=$out timeout "${JCCL_GPU_LAT_TIMEOUT:-100}" $here/run.sh lat $lat_configs > "$out/lat-stdout.txt" 2>&1
fi
wants bench || wants lat && python3 $here/summarize.py "$out" --all

if wants ceilings; then
step "ceilings"
OUT=$out timeout 40 $here/run.sh ceilings 2>&1 | tail -8
fi

tar -C "$(dirname "$out")" -czf "$(dirname "$out")/r.tgz" r && rm -rf "$out"
