#!/usr/bin/env bash
# Runs a command in the host (network namespace) of this MPI rank: ranks in blocks of
# JCCL_RANKS_PER_HOST over jccl-h0, jccl-h1, ... (bench/netns/hosts.sh), with NCCL_HOSTID set to
# the host, so that mpirun's ranks land on the hosts as jccl run --hosts places them.
#   mpirun -np 4 -x MASTER_ADDR=10.213.0.1 -x MASTER_PORT=29500 -x JCCL_RANKS_PER_HOST=2 \
#     bench/netns/in-host.sh bin/jccl perf all_reduce ...
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:?not started by Open MPI\'s mpirun}
per=${JCCL_RANKS_PER_HOST:-1}
host=${JCCL_NETNS_PREFIX:-jccl}-h$((rank / per))
export NCCL_HOSTID=$host
exec ip netns exec "$host" "$@"
