#!/usr/bin/env bash
# JCCL's all-reduce against Open MPI's MPI_Allreduce, same run, ranks spread over hosts made of
# network namespaces (hosts.sh): H hosts x P ranks, each host's link limited to RATE, so the
# network between hosts is the bottleneck. JCCL: jccl perf --hosts (shared memory inside a host,
# JcclSocket between). Open MPI: mpirun started in the first host, each rank moved into its host by
# in-host.sh, TCP between ranks (--mca btl tcp,self; its shared memory would bypass the network,
# since every namespace shares this machine's /dev/shm), PMIx reachable over the switch.
# Prints busbw (GB/s, out of place) per size and the ratio JCCL / Open MPI, best of ROUNDS.
#   sudo bench/netns/compare.sh [H=2] [P=2] [RATE=5gbit] [ROUNDS=2]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts=${1:-2}; per=${2:-2}; rate=${3:-5gbit}; rounds=${4:-2}
np=$((hosts * per))
command -v mpicc > /dev/null || { echo "compare.sh: mpicc not found: apt-get install -y openmpi-bin libopenmpi-dev" >&2; exit 1; }
mkdir -p "$root/bench/mpi/target"
mpicc -O2 -o "$root/bench/mpi/target/allreduce_baseline" "$root/bench/mpi/allreduce_baseline.c"
"$root/bin/jccl" --version > /dev/null 2>&1
"$here/hosts.sh" up "$hosts" "$rate"
trap '"$here/hosts.sh" down' EXIT
list=$(for ((i = 0; i < hosts; i++)); do printf '%sjccl-h%d' "$([ $i -gt 0 ] && echo ,)" $i; done)
out=$(mktemp -d)
for ((r = 0; r < rounds; r++)); do
  "$root/bin/jccl" perf all_reduce -b 1M -e 64M -f 4 -n 10 -w 2 -c 1 -np "$np" --hosts "$list" 2> /dev/null \
    | awk '$1 ~ /^[0-9]+$/ { print $1, $8 }' >> "$out/jccl"
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=eth0 ip netns exec jccl-h0 \
    mpirun --allow-run-as-root --oversubscribe -np "$np" --mca btl tcp,self --mca btl_tcp_if_include eth0 \
      --mca oob_tcp_if_include eth0 -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include \
      -x JCCL_RANKS_PER_HOST="$per" "$here/in-host.sh" "$root/bench/mpi/target/allreduce_baseline" \
      -b 1M -e 64M -f 4 -n 10 -w 2 2> /dev/null | awk '$1 ~ /^[0-9]+$/ { print $1, $5 }' >> "$out/ompi"
done
echo "# all_reduce busbw (GB/s), $hosts hosts x $per ranks, links $rate, best of $rounds rounds"
echo "| size | Open MPI (TCP between ranks) | JCCL (SHM in a host, JcclSocket between) | ratio |"
echo "|---|---|---|---|"
awk -f "$root/bench/netns/best-of.awk" "$out/ompi" "$out/jccl" | sort -n \
  | awk '{ printf "| %d MiB | %.3f | %.3f | %.2fx |\n", $1 / 1048576, $2, $3, ($2 > 0 ? $3 / $2 : 0) }'
rm -rf "$out"
