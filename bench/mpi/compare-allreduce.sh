#!/usr/bin/env bash
# JCCL's all-reduce against Open MPI's MPI_Allreduce in one run, on this machine's local ranks:
# bus bandwidth at 1 MiB and 64 MiB and the time of an 8-byte all-reduce, for 2 and 4 ranks,
# each figure the best of a few alternating rounds (the machine may be shared). Both libraries
# run twice: with their defaults (shared memory between local ranks) and through TCP only
# (JCCL: NCCL_SHM_DISABLE=1, the socket transport; Open MPI: --mca btl tcp,self).
#   bench/mpi/compare-allreduce.sh [rounds]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-3}
command -v mpicc >/dev/null || { echo "compare-allreduce.sh: mpicc not found: apt-get install -y openmpi-bin libopenmpi-dev" >&2; exit 1; }
mkdir -p "$here/target"
mpicc -O2 -o "$here/target/allreduce_baseline" "$here/allreduce_baseline.c"
"$root/bin/jccl" --version >/dev/null

# name size -> the out-of-place busbw (GB/s) or time (us) column of one run
jccl() { # np bytes iters column [VAR=value...]
  local np=$1 bytes=$2 iters=$3 col=$4; shift 4
  env "$@" "$root/bin/jccl" perf all_reduce -b "$bytes" -e "$bytes" -n "$iters" -w "$warmup" -c 1 -np "$np" \
    | awk -v col="$col" '$1 ~ /^[0-9]+$/ { print (col == "time" ? $6 : $8) }'
}
mpi() { # np bytes iters column [mpirun options...]
  local np=$1 bytes=$2 iters=$3 col=$4; shift 4
  mpirun --allow-run-as-root --oversubscribe -np "$np" "$@" "$here/target/allreduce_baseline" -b "$bytes" -e "$bytes" \
      -n "$iters" -w "$warmup" | awk -v col="$col" '$1 ~ /^[0-9]+$/ { print (col == "time" ? $3 : $5) }'
}
best() { sort -g | { [ "$1" = min ] && head -1 || tail -1; }; }
ratio() { # jccl mpi -> JCCL relative to MPI ($col: time or busbw), above 1 when JCCL is better
  if [ "$col" = time ]; then awk -v j="$1" -v m="$2" 'BEGIN{printf "%.2fx", m/j}'; else awk -v j="$1" -v m="$2" 'BEGIN{printf "%.2fx", j/m}'; fi
}

printf '# load average before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '# %-5s %-22s %12s %12s %12s %12s %9s %9s\n' ranks metric "JCCL (shm)" "MPI (shm)" "JCCL (tcp)" "MPI (tcp)" \
  "shm" "tcp"
for np in 2 4; do
  for metric in "busbw 1MiB" "busbw 64MiB" "8B latency"; do
    case $metric in
      # Both sides get the same calls: enough of them (about a second's worth) that one
      # scheduling hiccup on a shared 2-core machine, or a JVM's first 100 ms, does not decide
      # the figure.
      "busbw 1MiB") bytes=1M; iters=5000; warmup=500; col=busbw; pick=max;;
      "busbw 64MiB") bytes=64M; iters=20; warmup=5; col=busbw; pick=max;;
      "8B latency") bytes=8; iters=50000; warmup=5000; col=time; pick=min;;
    esac
    j=(); s=(); k=(); t=()
    for ((r = 0; r < rounds; r++)); do
      j+=("$(jccl "$np" "$bytes" "$iters" "$col")")
      s+=("$(mpi "$np" "$bytes" "$iters" "$col")")
      k+=("$(jccl "$np" "$bytes" "$iters" "$col" NCCL_SHM_DISABLE=1)")
      t+=("$(mpi "$np" "$bytes" "$iters" "$col" --mca btl tcp,self)")
    done
    jb=$(printf '%s\n' "${j[@]}" | best $pick); sb=$(printf '%s\n' "${s[@]}" | best $pick)
    kb=$(printf '%s\n' "${k[@]}" | best $pick); tb=$(printf '%s\n' "${t[@]}" | best $pick)
    unit=$([ "$col" = time ] && echo us || echo GB/s)
    printf '  %-5s %-22s %12s %12s %12s %12s %9s %9s\n' "$np" "$metric ($unit)" "$jb" "$sb" "$kb" "$tb" \
      "$(ratio "$jb" "$sb")" "$(ratio "$kb" "$tb")"
  done
done
printf '# load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# ratios (shm: JCCL's default against Open MPI's; tcp: both through TCP only): JCCL / MPI for bandwidth,"
echo "# MPI / JCCL for latency; above 1 means JCCL is better"
