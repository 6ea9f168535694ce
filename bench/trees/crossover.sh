#!/usr/bin/env bash
# Rings against trees, all_reduce, on either side of the tuner's crossover: for each rank count
# and data path, jccl perf with NCCL_ALGO=Ring, NCCL_ALGO=Tree and the tuner's own choice, ROUNDS
# rounds alternating. Prints every row, then per size the best time of each and the tuner's pick.
#
#   bench/trees/crossover.sh [ROUNDS] [RANKS...]        (default: 3 rounds, 4 and 8 ranks)
#   JCCL="java ... io.jccl.cli.Jccl" bench/trees/crossover.sh   (where bin/jccl cannot build)
#   TREE_MIN=64K TREE_MAX=64M TREE_ITERS=50             (sizes and timed calls per size)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds=${1:-3}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(4 8)
jccl=${JCCL:-bin/jccl}
min=${TREE_MIN:-64K}
max=${TREE_MAX:-64M}
iters=${TREE_ITERS:-50}
out=$(mktemp -d)
for n in "${ranks[@]}"; do
  for path in shm net; do
    shmoff=$([ $path = net ] && echo 1 || echo 0)
    for round in $(seq 1 "$rounds"); do
      for algo in Ring Tree auto; do
        setting=$([ $algo = auto ] && echo "" || echo $algo)
        # LL off: the rows compare the two Simple algorithms at every size.
        NCCL_SHM_DISABLE=$shmoff NCCL_ALGO=$setting JCCL_LL_THRESHOLD=0 \
          $jccl perf all_reduce -b "$min" -e "$max" -f 2 -np "$n" -n "$iters" -w 10 2>&1 \
          | grep -E '^ +[0-9]' | awk -v n=$n -v p=$path -v a=$algo -v r=$round \
              '{print n, p, a, r, $1, ($6 < $10 ? $6 : $10), $NF}' >> "$out/rows"
      done
    done
  done
done
echo "# ranks path algo round size best_time_us chosen"
cat "$out/rows"
echo
echo "# per size: best of the rounds (us), Ring, Tree, the faster, the tuner's choice, its time"
awk '{k=$1" "$2" "$5; t=$6;
      if ($3=="Ring" && (!(k in ring) || t<ring[k])) ring[k]=t;
      if ($3=="Tree" && (!(k in tree) || t<tree[k])) tree[k]=t;
      if ($3=="auto") { pick[k]=$7; if (!(k in autot) || t<autot[k]) autot[k]=t }
      keys[k]=1 }
     END { for (k in keys) { f = ring[k] <= tree[k] ? "Ring" : "Tree";
           printf "%s %10.1f %10.1f %5s %5s %10.1f %s\n", k, ring[k], tree[k], f, pick[k], autot[k], (f==pick[k] ? "" : "(tuner differs)") } }' \
  "$out/rows" | sort -k1,1n -k2,2 -k3,3n
rm -rf "$out"
