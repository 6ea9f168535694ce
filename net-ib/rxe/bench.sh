#!/usr/bin/env bash
# JcclIB against perftest on the same SoftRoCE device, in one VM session:
# io.jccl.net.ib.bench.IbTransportBench runs ib_write_bw (per message size) and ib_write_lat (8 bytes)
# between its own rounds and prints the table with the ratios. Needs
# ../shared/rxe/install-deps.sh --bench (as root).
#   JCCL_BENCH_SIZES="65536 1048576"  JCCL_BENCH_ROUNDS=3  JCCL_BENCH_ARGS="--window 8 --threads 2"
#   JCCL_BENCH_OPTS=" "  (the default tiered JIT instead of C1 only)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/vm.sh"
command -v ib_write_bw >/dev/null || { echo "net-ib: perftest is missing: ../shared/rxe/install-deps.sh --bench" >&2; exit 2; }
# 11 sizes x 5 rounds of perftest and JcclIB take a while under TCG
RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-3600} exec "$rxe/run-in-rxe-vm.sh" net-ib/rxe/in-vm-bench.sh
