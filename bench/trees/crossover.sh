#!/usr/bin/env bash
# Rings against trees and halving-doubling, all_reduce, on either side of the tuner's crossovers:
# for each rank count and data path, jccl perf with NCCL_ALGO=Ring, Tree, HalvingDoubling and the
# tuner's own choice, ROUNDS rounds alternating. Prints every row, then per size the best time of
# each and the tuner's pick. (Halving-doubling runs on the network path of a power of two of
# ranks; elsewhere its rows are rings, as the last column of the rows shows.)
#
#   bench/trees/crossover.sh [ROUNDS] [RANKS...]        (default: 3 rounds, 4 and 8 ranks)
#   JCCL="java ... io.jccl.cli.Jccl" bench/trees/crossover.sh   (where bin/jccl cannot build)
#   TREE_MIN=64K TREE_MAX=64M TREE_ITERS=50             (sizes and timed calls per size)
#   TREE_PATHS=net                                      (data paths: shm net, the default, or one)
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
  for path in ${TREE_PATHS:-shm net}; do
    shmoff=$([ $path = net ] && echo 1 || echo 0)
    for round in $(seq 1 "$rounds"); do
      for algo in Ring Tree HalvingDoubling auto; do
        setting=$([ $algo = auto ] && echo "" || echo $algo)
        # LL off: the rows compare the Simple algorithms at every size.
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
echo "# per size: best of the rounds (us), Ring, Tree, HalvingDoubling, the fastest, the tuner's choice, its time"
awk '{k=$1" "$2" "$5; t=$6;
      if ($3!="auto" && (!((k,$3) in best) || t<best[k,$3])) best[k,$3]=t;
      if ($3=="HalvingDoubling") hdran[k]=$7;
      if ($3=="auto") { pick[k]=$7; if (!(k in autot) || t<autot[k]) autot[k]=t }
      keys[k]=1 }
     END { for (k in keys) { r=best[k,"Ring"]; tr=best[k,"Tree"]; hd=best[k,"HalvingDoubling"];
           f = r <= tr ? "Ring" : "Tree"; ft = r <= tr ? r : tr;
           if (hdran[k]=="HalvingDoubling" && hd < ft) f = "HalvingDoubling";
           printf "%s %10.1f %10.1f %10s %15s %15s %10.1f %s\n", k, r, tr,
                  (hdran[k]=="HalvingDoubling" ? sprintf("%.1f", hd) : "-"), f, pick[k], autot[k], (f==pick[k] ? "" : "(tuner differs)") } }' \
  "$out/rows" | sort -k1,1n -k2,2 -k3,3n
rm -rf "$out"
