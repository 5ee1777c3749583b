#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What top shows while the kernel rewrites states under its walk (issue #26).
#	bench/top_walk.sh [ROUNDS] BUILD [BUILD...]	(as root; ROUNDS default 10)
# A 100/s burst 10 limiter on a veth in namespaces made here; 65,536 sources
# (198.18.0.0/16, trafgen's random bytes) each send about 1.5 packets a second,
# far under the limit: the true USED of any of them is at most 10% (one
# packet of a 10-packet bucket). Three CPU hogs slow the walk, as on a busy
# host. Each BUILD's "top IFACE -n 1 --json" runs ROUNDS times, the builds
# alternating, and the highest USED it lists is printed with the time the
# command took: a value over 100% is one the policy cannot produce.
#
# Network safety: traffic only from a namespace made here to its veth peer;
# addresses in 198.18.0.0/16; trafgen, the hogs and the rounds are bounded in
# count and in time; everything is removed on exit.
set -u
rounds=10
case "${1:-}" in [0-9]*) rounds=$1; shift ;; esac
[ $# -ge 1 ] || { echo "usage: $0 [ROUNDS] BUILD [BUILD...]" >&2; exit 2; }
first=$(cd "$1" && pwd)
ns=rltw$$
rx=${ns}r
tx=${ns}t
cfg=$(mktemp /tmp/rltw.XXXXXX)
pids=()
cleanup() {
	exec 2>/dev/null # the shell's notes on the jobs killed here
	for p in "${pids[@]}"; do kill -9 -- "-$p"; done
	wait
	nsenter --net="/run/netns/$rx" "$first/xdp-ratelimit" detach va >/dev/null
	ip netns del "$rx"
	ip netns del "$tx"
	rm -f "$cfg"
}
trap cleanup EXIT
ip netns add "$rx" && ip netns add "$tx" || exit 1
ip link add va netns "$rx" type veth peer name vb netns "$tx" || exit 1
ip -n "$rx" link set va up && ip -n "$tx" link set vb up || exit 1
mac=$(ip netns exec "$rx" cat /sys/class/net/va/address)
nsenter --net="/run/netns/$rx" "$first/xdp-ratelimit" attach va --rate 100 --burst 10 >/dev/null ||
	exit 1
echo "{ eth(da=$mac), ipv4(sa=198.18.0.0, sa[2]=drnd(), sa[3]=drnd(), da=198.18.0.2, ttl=64)," \
	"udp(sp=40000, dp=9), fill(0x00, 18) }" >"$cfg"
# ~100 kpps (-t 10us) for at most 120 s.
setsid timeout -k 1 120 ip netns exec "$tx" trafgen -o vb -i "$cfg" -n 12000000 -t 10us -P 1 -q \
	>/dev/null 2>&1 &
pids+=($!)
sleep 5
for _ in 1 2 3; do
	setsid timeout 120 sh -c 'while :; do :; done' &
	pids+=($!)
done
printf '%-40s %5s %10s %8s\n' BUILD ROUND "MAX USED" "TOOK"
for r in $(seq "$rounds"); do
	for b in "$@"; do
		t0=$(date +%s%N)
		out=$(nsenter --net="/run/netns/$rx" "$b/xdp-ratelimit" top va -n 1 --json 2>&1)
		t1=$(date +%s%N)
		used=$(echo "$out" | grep -o '"used":[0-9.]*' | head -1 | cut -d: -f2)
		printf '%-40s %5d %9.1f%% %6d ms\n' "$b" "$r" "$(echo "${used:-0} * 100" | bc -l)" \
			$(((t1 - t0) / 1000000))
	done
done
nsenter --net="/run/netns/$rx" "$first/xdp-ratelimit" stats va --json |
	grep -o '"sources":[0-9]*' | sed 's/.*:/sources tracked: /'
