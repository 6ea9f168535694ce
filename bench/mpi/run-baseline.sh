#!/usr/bin/env bash
# Builds allreduce_baseline.c and runs Open MPI's MPI_Allreduce on local ranks, with Open MPI's
# default transports (shared memory on one host) and with TCP only (--mca btl tcp,self), which
# is what JCCL's socket transport does.
#   bench/mpi/run-baseline.sh [np] [allreduce_baseline args: -b -e -f -n -w]
# Needs Debian's openmpi-bin and libopenmpi-dev (apt-get install -y openmpi-bin libopenmpi-dev).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v mpicc >/dev/null || { echo "run-baseline.sh: mpicc not found: apt-get install -y openmpi-bin libopenmpi-dev" >&2; exit 1; }
mkdir -p "$here/target"
mpicc -O2 -o "$here/target/allreduce_baseline" "$here/allreduce_baseline.c"
np=${1:-2}
shift || true
mpirun=(mpirun --allow-run-as-root --oversubscribe -np "$np")
echo "# Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}'), default transports (shared memory)"
"${mpirun[@]}" "$here/target/allreduce_baseline" "$@"
echo "# Open MPI, TCP only (--mca btl tcp,self)"
"${mpirun[@]}" --mca btl tcp,self "$here/target/allreduce_baseline" "$@"
