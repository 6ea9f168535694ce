#!/usr/bin/env bash
# Runs inside the SoftRoCE VM (started by bench.sh): io.jccl.net.ib.bench.IbTransportBench, which
# runs perftest's ib_write_bw / ib_write_lat on the same rxe device between its own rounds and
# prints the table with the ratios.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
ib=net-ib/target
cp="$ib/test-classes:$ib/classes:$(cat "$ib/test-classpath.txt")"
sizes=${JCCL_BENCH_SIZES:-65536 131072 262144 524288 1048576 2097152 4194304 8388608 16777216 33554432 67108864}
# C1 only by default: under TCG the C2 compiler threads take the CPUs that SoftRoCE needs while
# they compile. JCCL_BENCH_OPTS=" " runs the default tiered JIT (then give it a long warm-up:
# JCCL_BENCH_ARGS="--warmup-bytes 2147483648 --lat-warmup 20000").
exec "$JCCL_JAVA" --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC ${JCCL_BENCH_OPTS:--XX:TieredStopAtLevel=1} \
    -cp "$cp" io.jccl.net.ib.bench.IbTransportBench --sizes "${sizes// /,}" --gid "${RXE_GID_INDEX:-1}" \
    --rounds "${JCCL_BENCH_ROUNDS:-5}" ${JCCL_BENCH_ARGS:-}
