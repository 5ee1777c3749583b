#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# A what-if report on a capture recorded the way an operator records one:
# tcpdump on the receiving end of a veth (received frames, whole) while
# trafgen sends a flood from one source, a flood from random sources, an IPv6
# flood, a calm source and a mix of VLAN, IPv6, ARP and truncated IPv4
# frames; then simulate --pcap --compare on three policies, with its plot.
#	bench/whatif.sh [BUILD [OUTDIR]]	(as root; OUTDIR defaults to bench/results)
# Writes OUTDIR/whatif.txt (the report and the command) and OUTDIR/whatif.png;
# the capture itself is removed. tests/test_replay.c (replay_tcpdump_flood)
# checks on such a capture that the kernel and simulate agree frame for frame.
#
# Network safety: two namespaces made here and removed on exit, one veth pair
# between them; IPv4 198.18.0.0/15, IPv6 2001:2::/48; every trafgen run is
# bounded by -n and by timeout(1), tcpdump by timeout(1).
set -e
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/results}
B=$(realpath "$build")/xdp-ratelimit
id=$$
tx=rlbench-wtx-$id
rx=rlbench-wrx-$id
dir=$(mktemp -d)
td=
pids=
cleanup() {
	[ -n "$td" ] && kill -INT "$td" 2>/dev/null && wait "$td" 2>/dev/null
	ip netns del $tx 2>/dev/null || true
	ip netns del $rx 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
for t in tcpdump trafgen gnuplot; do
	command -v $t >/dev/null || { echo "whatif.sh: $t is missing (make deps)" >&2; exit 1; }
done

ip netns add $tx
ip netns add $rx
ip link add rwt$id netns $tx type veth peer name rwr$id netns $rx
ip -n $tx link set rwt$id up
ip -n $rx link set rwr$id up
mac=$(ip -n $rx -j link show rwr$id | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')

flow() { # NAME COUNT GAP PACKET
	printf '%s\n' "$4" >"$dir/$1.cfg"
	timeout -k 1 60 ip netns exec $tx trafgen -o rwt$id -i "$dir/$1.cfg" -n "$2" -t "$3" \
		-P 1 -Q >"$dir/$1.log" 2>&1 &
	pids="$pids $!"
}
udp4() { echo "{ eth(da=$mac), ipv4(sa=$1, da=198.18.0.2, ttl=64), udp(sp=40000, dp=9), fill(0x00, 18) }"; }

timeout -k 1 120 ip netns exec $rx tcpdump -i rwr$id -w "$dir/flood.pcap" -U --immediate-mode \
	-B 16384 -s 0 -Q in -n 2>"$dir/tcpdump.log" &
td=$!
for i in $(seq 1 300); do
	grep -q "listening on" "$dir/tcpdump.log" 2>/dev/null && break
	sleep 0.02
done
flow heavy 30000 10us "$(udp4 198.18.0.66)"
flow spoof 5000 60us "{ eth(da=$mac), ipv4(sa=198.18.3.0, sa[3]=drnd(), da=198.18.0.2, ttl=64), udp(sp=40000, dp=9), fill(0x00, 18) }"
flow six 5000 60us "{ eth(da=$mac, type=0x86dd), ipv6(sa=2001:2::66, da=2001:2::2, hl=64), udp(sp=40000, dp=9), fill(0x00, 18) }"
flow calm 500 1ms "$(udp4 198.18.0.7)"
cat >"$dir/mix.cfg" <<EOF
{ eth(da=$mac, type=0x8100), vlan(id=100), ipv4(sa=198.18.0.5, da=198.18.0.2), udp(dp=9), fill(0x00, 18) }
{ eth(da=$mac, type=0x0800), fill(0x45, 10) }
{ eth(da=ff:ff:ff:ff:ff:ff, type=0x0806), fill(0x00, 28) }
{ eth(da=$mac, type=0x86dd), ipv6(sa=2001:2::5, da=2001:2::2, hl=64), udp(dp=9), fill(0x00, 18) }
EOF
timeout -k 1 60 ip netns exec $tx trafgen -o rwt$id -i "$dir/mix.cfg" -n 400 -t 1ms -P 1 -Q \
	>/dev/null 2>&1
wait $pids || true
sleep 0.3
kill -INT "$td"
wait "$td" || true
td=

cmd="simulate --pcap flood.pcap --compare '{rate: 500, burst: 50}' '{rate: 5000, burst: 500}' '{rate: 1000, burst: 100, prefix4: 16}' --sources 3 --plot whatif.png"
{
	echo "# bench/whatif.sh, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# tcpdump: $(tail -3 "$dir/tcpdump.log" | tr '\n' ' ')"
	echo "\$ xdp-ratelimit $cmd"
	(cd "$dir" && eval "\"$B\" $cmd")
	cp "$dir/whatif.png" "$out/whatif.png"
} >"$dir/whatif.txt"
cp "$dir/whatif.txt" "$out/whatif.txt"
cat "$out/whatif.txt"
