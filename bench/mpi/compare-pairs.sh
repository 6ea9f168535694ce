#!/usr/bin/env bash
# JCCL's all-reduce against Open MPI's at chosen sizes, as paired runs: each pair runs both
# libraries back to back (which goes first alternates), and each pair gives one ratio, Open MPI's
# time over JCCL's (above 1: JCCL is faster). On a shared machine the spread between runs is wider
# than most differences worth measuring (10 to 20% on the 2-core build machine at 1 to 4 MiB), and
# a pair shares most of the drift that separates rounds, so the count of pairs at 1.0x or better
# says more than a ratio of medians. compare-sweep.sh covers every size in fewer rounds.
#   bench/mpi/compare-pairs.sh [ranks] [pairs] [tcp|shm] [size ...]    (sizes in bytes, K or M)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
np=${1:-4}
pairs=${2:-10}
path=${3:-tcp}
shift $(($# < 3 ? $# : 3))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8 1M 4M)
case $path in
  tcp) jccl_env=(NCCL_SHM_DISABLE=1); mpi_opts=(--mca btl tcp,self);;
  shm) jccl_env=(); mpi_opts=();;
  *) echo "compare-pairs.sh: the path is tcp or shm, not '$path'" >&2; exit 2;;
esac
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "compare-pairs.sh: pairs must be a positive number, not '$pairs'" >&2; exit 2; }
command -v mpicc >/dev/null || { echo "compare-pairs.sh: mpicc not found: apt-get install -y openmpi-bin libopenmpi-dev" >&2; exit 1; }
for s in "${sizes[@]}"; do
  [[ $s =~ ^[1-9][0-9]*[kKmM]?$ ]] || { echo "compare-pairs.sh: '$s' is not a size (bytes, or with K or M)" >&2; exit 2; }
done
mkdir -p "$here/target"
mpicc -O2 -o "$here/target/allreduce_baseline" "$here/allreduce_baseline.c"
"$root/bin/jccl" --version >/dev/null
bytes() { # 8, 32K, 4M -> bytes
  case $1 in
    *[kK]) echo $((${1%[kK]} * 1024));;
    *[mM]) echo $((${1%[mM]} * 1048576));;
    *) echo "$1";;
  esac
}
calls() { # bytes -> calls a run: about a second of calls or more on the 2-core machine
  local b=$1
  if ((b <= 65536)); then echo 10000; elif ((b <= 1048576)); then echo 1000
  elif ((b <= 4194304)); then echo 300; elif ((b <= 16777216)); then echo 40; else echo 10; fi
}
jccl() { # bytes calls -> out-of-place us
  env "${jccl_env[@]}" "$root/bin/jccl" perf all_reduce -b "$1" -e "$1" -n "$2" -w $(($2 / 10 + 1)) -c 1 -np "$np" \
    | awk '$1 ~ /^[0-9]+$/ { print $6 }'
}
mpi() {
  mpirun --allow-run-as-root --oversubscribe -np "$np" "${mpi_opts[@]}" "$here/target/allreduce_baseline" \
      -b "$1" -e "$1" -n "$2" -w $(($2 / 10 + 1)) | awk '$1 ~ /^[0-9]+$/ { print $3 }'
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '# %s ranks, %s, %s pairs; load average before: %s\n' "$np" "$path" "$pairs" "$(cut -d' ' -f1-3 /proc/loadavg)"
for ((p = 1; p <= pairs; p++)); do
  for s in "${sizes[@]}"; do
    b=$(bytes "$s"); n=$(calls "$b")
    if ((p % 2)); then j=$(jccl "$b" "$n"); m=$(mpi "$b" "$n"); else m=$(mpi "$b" "$n"); j=$(jccl "$b" "$n"); fi
    [[ -n $j && -n $m ]] || { echo "compare-pairs.sh: no time from $([ -z "$j" ] && echo JCCL || echo 'Open MPI') at $b B" >&2; exit 1; }
    echo "$b $j $m" >>"$out"
  done
  printf '# pair %d done, load average %s\n' "$p" "$(cut -d' ' -f1-3 /proc/loadavg)"
done
printf '| size (B) | JCCL median (us) | Open MPI median (us) | Open MPI / JCCL, median of pairs | pairs at 1.0x or better | lowest, highest pair |\n|---|---|---|---|---|---|\n'
for b in $(awk '{ print $1 }' "$out" | sort -n -u); do
  awk -v s="$b" '$1 == s { j[++n] = $2; m[n] = $3; r[n] = $3 / $2 }
    function median(a, k,   i, t, c) { # sorts a copy of a[1..k]
      for (i = 1; i <= k; i++) c[i] = a[i]
      for (i = 2; i <= k; i++) { t = c[i]; for (x = i - 1; x >= 1 && c[x] > t; x--) c[x + 1] = c[x]; c[x + 1] = t }
      lo = c[1]; hi = c[k]
      return k % 2 ? c[(k + 1) / 2] : (c[k / 2] + c[k / 2 + 1]) / 2 }
    END { jm = median(j, n); mm = median(m, n); rm = median(r, n); wins = 0
      for (i = 1; i <= n; i++) if (r[i] >= 1) wins++
      printf "| %s | %.2f | %.2f | %.3fx | %d of %d | %.2fx, %.2fx |\n", s, jm, mm, rm, wins, n, lo, hi }' "$out"
done
printf '# load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
