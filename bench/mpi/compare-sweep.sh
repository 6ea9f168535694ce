#!/usr/bin/env bash
# JCCL's all-reduce against Open MPI's at every size from 8 B to 64 MiB (factor 4), for one rank
# count and one path, in rounds that alternate the two libraries. Prints each size's median time
# over the rounds for both (out-of-place us) and Open MPI's time over JCCL's (above 1: JCCL is
# faster). compare-allreduce.sh measures three sizes on both paths; this one the whole range.
#   bench/mpi/compare-sweep.sh [ranks] [rounds] [tcp|shm]
# tcp: JCCL with NCCL_SHM_DISABLE=1 (the socket transport), Open MPI with --mca btl tcp,self.
# shm: both with their defaults (shared memory between local ranks).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
np=${1:-4}
rounds=${2:-3}
path=${3:-tcp}
case $path in
  tcp) jccl_env=(NCCL_SHM_DISABLE=1); mpi_opts=(--mca btl tcp,self);;
  shm) jccl_env=(); mpi_opts=();;
  *) echo "compare-sweep.sh: the path is tcp or shm, not '$path'" >&2; exit 2;;
esac
command -v mpicc >/dev/null || { echo "compare-sweep.sh: mpicc not found: apt-get install -y openmpi-bin libopenmpi-dev" >&2; exit 1; }
mkdir -p "$here/target"
mpicc -O2 -o "$here/target/allreduce_baseline" "$here/allreduce_baseline.c"
"$root/bin/jccl" --version >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Three sweeps per library and round: the small sizes with many calls (a row of 2000 8-byte calls
# on 2 ranks lasted 22 ms, so that one scheduling stall doubled it),
# the large with few (up to a second each at 64 MiB through TCP on 4 ranks).
sweeps=("8 256K 10000 1000" "1M 4M 200 20" "16M 64M 20 2")
jccl() { # min max iters warmup -> "size us" lines
  env "${jccl_env[@]}" "$root/bin/jccl" perf all_reduce -b "$1" -e "$2" -f 4 -n "$3" -w "$4" -c 1 -np "$np" \
    | awk '$1 ~ /^[0-9]+$/ { print $1, $6 }'
}
mpi() {
  mpirun --allow-run-as-root --oversubscribe -np "$np" "${mpi_opts[@]}" "$here/target/allreduce_baseline" \
      -b "$1" -e "$2" -f 4 -n "$3" -w "$4" | awk '$1 ~ /^[0-9]+$/ { print $1, $3 }'
}

printf '# %s ranks, %s, %s rounds; load average before: %s\n' "$np" "$path" "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  for s in "${sweeps[@]}"; do
    # shellcheck disable=SC2086 # the sweep's four fields
    jccl $s >>"$out/jccl"
    # shellcheck disable=SC2086
    mpi $s >>"$out/mpi"
  done
  printf '# round %d done, load average %s\n' "$r" "$(cut -d' ' -f1-3 /proc/loadavg)"
done

median() { # file size -> the median of that size's times
  awk -v s="$2" '$1 == s { print $2 }' "$1" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-";
    else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '| size (B) | JCCL (us) | Open MPI (us) | Open MPI / JCCL | JCCL rounds | Open MPI rounds |\n|---|---|---|---|---|---|\n'
for size in $(awk '{ print $1 }' "$out/jccl" | sort -n -u); do
  j=$(median "$out/jccl" "$size"); m=$(median "$out/mpi" "$size")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$size" "$j" "$m" \
    "$(awk -v j="$j" -v m="$m" 'BEGIN { if (j + 0 > 0 && m + 0 > 0) printf "%.2fx", m / j; else print "-" }')" \
    "$(awk -v s="$size" '$1 == s { printf "%s%s", sep, $2; sep = ", " }' "$out/jccl")" \
    "$(awk -v s="$size" '$1 == s { printf "%s%s", sep, $2; sep = ", " }' "$out/mpi")"
done
printf '# load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
