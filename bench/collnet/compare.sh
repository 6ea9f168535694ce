#!/usr/bin/env bash
# All-reduce through CollNet (JcclCollNet, its aggregator on the switch) against JCCL's ring, same
# run, H hosts of one rank each made of network namespaces (bench/netns/hosts.sh), each host's link
# limited to RATE so that the network between hosts is the bottleneck. The aggregator runs in the
# switch's namespace (10.213.0.254), as in-network reduction runs in the switch: every host sends
# its data once and receives the result once, where a ring moves 2(H-1)/H times the data over each
# link. Prints busbw (GB/s, nccl-tests' formula from the out-of-place time) per size, best of ROUNDS, the ratio
# CollNet / ring, and that ratio over the bound 2(H-1)/H.
#   sudo bench/collnet/compare.sh [H=4] [RATE=1gbit] [ROUNDS=2] [MAX=64M]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts=${1:-4}; rate=${2:-1gbit}; rounds=${3:-2}; max=${4:-64M}
port=29650
"$root/bin/jccl" --version > /dev/null 2>&1
"$root/bench/netns/hosts.sh" up "$hosts" "$rate"
out=$(mktemp -d)
agg_pid=
cleanup() {
  [ -n "$agg_pid" ] && kill "$agg_pid" 2> /dev/null || true
  "$root/bench/netns/hosts.sh" down
  rm -rf "$out"
}
trap cleanup EXIT
export JCCL_COLLNET_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
ip netns exec jccl-sw "$root/bin/jccl" collnet-aggregator --bind 10.213.0.254 --port $port > "$out/aggregator" 2>&1 &
agg_pid=$!
for _ in $(seq 100); do grep -q listening "$out/aggregator" 2> /dev/null && break; sleep 0.2; done
grep -q listening "$out/aggregator" || { echo "the aggregator did not start:" >&2; cat "$out/aggregator" >&2; exit 1; }
list=$(for ((i = 0; i < hosts; i++)); do printf '%sjccl-h%d' "$([ $i -gt 0 ] && echo ,)" $i; done)
perf() {
  "$root/bin/jccl" perf all_reduce -b 1M -e "$max" -f 4 -n 10 -w 2 -c 1 -np "$hosts" --hosts "$list" 2> "$out/err" \
    | awk -v h="$hosts" '$1 ~ /^[0-9]+$/ && $6 > 0 { printf "%s %.4f %s\n", $1, $1 / $6 / 1e3 * 2 * (h - 1) / h, $NF }'
}
for ((r = 0; r < rounds; r++)); do
  NCCL_ALGO=Ring perf >> "$out/ring"
  NCCL_COLLNET_ENABLE=1 NCCL_ALGO=CollNet JCCL_COLLNET_AGGREGATOR=10.213.0.254:$port perf >> "$out/collnet"
done
grep -q CollNetChain "$out/collnet" || { echo "CollNet did not run:" >&2; cat "$out/err" "$out/collnet" >&2; exit 1; }
bound=$(awk -v h="$hosts" 'BEGIN { printf "%.3f", 2 * (h - 1) / h }')
echo "# all_reduce busbw (GB/s), $hosts hosts x 1 rank, links $rate, best of $rounds rounds; bound 2(H-1)/H = $bound"
echo "| size | JCCL ring | JCCL CollNet (JcclCollNet, aggregator on the switch) | CollNet / ring | of the bound |"
echo "|---|---|---|---|---|"
awk -f "$root/bench/netns/best-of.awk" "$out/ring" "$out/collnet" | sort -n \
  | awk -v b="$bound" '{ q = ($2 > 0 ? $3 / $2 : 0); printf "| %d MiB | %.4f | %.4f | %.2fx | %.2f |\n", $1 / 1048576, $2, $3, q, q / b }'
