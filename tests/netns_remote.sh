#!/bin/bash
# remote_tests again across two network namespaces joined by a veth pair: the client (the test
# executable) in one namespace, every `troupe worker` it starts in the other. With --netem the
# link also gets 5 ms delay and 1 % loss each way (tc netem). Exits 77 (CTest: skipped) with the
# reason where the machine allows no namespaces (or, with --netem, has no netem).
# Usage: netns_remote.sh [--netem] path/to/remote_tests [boost args]
set -u
netem=0
if [ "${1:-}" = "--netem" ]; then
  netem=1
  shift
fi
exe=$1
shift
skip() {
  echo "skipped: $*"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
command -v tc >/dev/null || skip "no tc command (iproute2)"
a=troupe_a_$$
b=troupe_b_$$
va=tva$$
vb=tvb$$
cleanup() {
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$a" 2>/dev/null || skip "cannot make a network namespace (ip netns add)"
ip netns add "$b" 2>/dev/null || skip "cannot make a second network namespace"
ip link add "$va" type veth peer name "$vb" 2>/dev/null || skip "cannot make a veth pair"
ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" || skip "cannot move the veth ends"
ip -n "$a" addr add 10.77.0.1/24 dev "$va"
ip -n "$b" addr add 10.77.0.2/24 dev "$vb"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set "$va" up
ip -n "$b" link set "$vb" up
link="no delay or loss added"
if [ $netem = 1 ]; then
  ip netns exec "$a" tc qdisc add dev "$va" root netem delay 5ms loss 1% 2>/dev/null ||
    skip "no netem queueing discipline (kernel module sch_netem)"
  ip netns exec "$b" tc qdisc add dev "$vb" root netem delay 5ms loss 1% || exit 1
  link="5 ms delay and 1 % loss each way"
fi
echo "client in $a (10.77.0.1), workers in $b (10.77.0.2) over a veth pair; $link"
TROUPE_TEST_WORKER_NETNS=$b TROUPE_TEST_WORKER_HOST=10.77.0.2 ip netns exec "$a" "$exe" "$@"
