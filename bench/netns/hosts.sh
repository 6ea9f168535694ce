#!/usr/bin/env bash
# Several "hosts" on this machine: one network namespace per host, each with its own address on a
# virtual switch, its link rate-limited with tc, so that ranks on different hosts talk through a
# network that is the bottleneck, while ranks of one host share memory as on a real node.
#
#   bench/netns/hosts.sh up N [RATE]   make hosts jccl-h0 .. jccl-h(N-1), 10.213.0.1 .. 10.213.0.N,
#                                     each link RATE (tc's units, default 10gbit), behind one switch;
#                                     the switch itself answers at 10.213.0.254 (where an in-network
#                                     service such as JcclCollNet's aggregator runs, unlimited)
#   bench/netns/hosts.sh down          remove them
#   bench/netns/hosts.sh check         exit 0 if namespaces can be made here (root, ip, tc), else 1
#                                     with the reason
# Then: bin/jccl run --hosts jccl-h0,jccl-h1 -np 4 MAIN   (or bin/jccl perf ... --hosts ...)
# Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN), iproute2 and tc. The switch is a bridge in a namespace
# of its own (jccl-sw), so the machine's own firewall never sees the traffic.
set -euo pipefail
prefix=${JCCL_NETNS_PREFIX:-jccl}
sw=$prefix-sw

check() {
  [ "$(id -u)" = 0 ] || { echo "network namespaces need root (this is uid $(id -u))"; return 1; }
  command -v ip > /dev/null || { echo "no ip command (apt-get install iproute2)"; return 1; }
  command -v tc > /dev/null || { echo "no tc command (apt-get install iproute2)"; return 1; }
  local probe=$prefix-probe-$$
  if ! err=$(ip netns add "$probe" 2>&1); then echo "ip netns add failed: $err"; return 1; fi
  if ! err=$(ip -n "$probe" link add p0 type veth peer name p1 2>&1); then
    ip netns del "$probe"; echo "no veth pairs here: $err"; return 1
  fi
  ip netns del "$probe"
}

down() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$prefix-(h[0-9]+|sw)$" || true); do
    ip netns del "$ns"
  done
}

up() {
  local n=$1 rate=${2:-10gbit}
  [ "$n" -ge 1 ] 2>/dev/null || { echo "hosts.sh up N: N must be a positive number" >&2; exit 2; }
  reason=$(check) || { echo "cannot make hosts here: $reason" >&2; exit 1; }
  down
  ip netns add "$sw"
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  ip -n "$sw" addr add 10.213.0.254/24 dev br0
  ip -n "$sw" link set lo up
  for ((i = 0; i < n; i++)); do
    local ns=$prefix-h$i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # eth0 in the host, port$i on the switch
    ip -n "$ns" link add eth0 type veth peer name port$i netns "$sw"
    ip -n "$sw" link set port$i master br0
    ip -n "$sw" link set port$i up
    ip -n "$ns" addr add 10.213.0.$((i + 1))/24 dev eth0
    ip -n "$ns" link set eth0 up
    # The host's sending side is the bottleneck, as a NIC's line rate would be.
    ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 1mb latency 50ms
  done
  echo "hosts $prefix-h0 .. $prefix-h$((n - 1)) up: 10.213.0.1 .. 10.213.0.$n, $rate each"
}

case ${1:-} in
  up) up "${2:-2}" "${3:-}" ;;
  down) down ;;
  check) check ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
