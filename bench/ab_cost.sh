#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The per-packet cost of the same frames through the programs of two builds,
# rounds interleaved, to show what a change to the packet path costs:
#	bench/ab_cost.sh BUILD_A BUILD_B [ROUNDS]	(as root)
# Each build attaches its limiter (skb mode, a rate no run reaches: every
# frame passes) to a veth of one namespace made here; bpftool prog run
# (BPF_PROG_TEST_RUN) runs each frame 2,000,000 times per round: untagged
# IPv4 (the main program's straight line; UDP, and a TCP ACK to port 22,
# which --syn-cookies looks at), and through the slow path IPv4
# behind a VLAN tag, IPv6, an IPv4-mapped IPv6 source and ARP. Prints
# "FRAME ROUND A_NS B_NS" and the load average before and after; read the
# ratio B/A over the rounds. RL_AB_ARGS: more of the policy, the same for
# both (a level above the source, say). No frame is sent.

set -e
A=$1/xdp-ratelimit
B=$2/xdp-ratelimit
NS=rlbench-ab-$$
dir=$(mktemp -d)
cleanup() {
	nsenter --net=/run/netns/$NS "$A" detach rpa0 >/dev/null 2>&1 || true
	nsenter --net=/run/netns/$NS "$B" detach rpb0 >/dev/null 2>&1 || true
	ip netns del $NS 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
python3 - "$dir" <<'PY'
import struct, sys
d = sys.argv[1]
mac = bytes.fromhex('020000000002020000000001')
def ip4(src):
    s = bytes(int(x) for x in src.split('.'))
    return struct.pack('!BBHHHBBH4s4s', 0x45, 0, 46, 1, 0, 64, 17, 0, s, bytes([198,18,0,2])) + struct.pack('!HHHH', 40000, 9, 26, 0) + bytes(18)
def tcp4(src, dport):
    s = bytes(int(x) for x in src.split('.'))
    # An ACK (flags 0x10), no options: a connection's packet, not a SYN.
    return struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 1, 0, 64, 6, 0, s, bytes([198,18,0,2])) + struct.pack('!HHIIBBHHH', 40000, dport, 1, 1, 5 << 4, 0x10, 512, 0, 0) + bytes(6)
def ip6(src):
    import ipaddress
    s = ipaddress.IPv6Address(src).packed
    return struct.pack('!IHBB', 6 << 28, 26, 17, 64) + s + ipaddress.IPv6Address('2001:2::2').packed + struct.pack('!HHHH', 40000, 9, 26, 0) + bytes(18)
fr = {
 'ipv4': mac + struct.pack('!H', 0x0800) + ip4('198.18.0.1'),
 'tcp4': mac + struct.pack('!H', 0x0800) + tcp4('198.18.0.1', 22),
 'vlan-ipv4': mac + struct.pack('!HHH', 0x8100, 100, 0x0800) + ip4('198.18.0.1'),
 'ipv6': mac + struct.pack('!H', 0x86dd) + ip6('2001:2::1'),
 'mapped': mac + struct.pack('!H', 0x86dd) + ip6('::ffff:198.18.0.1'),
 'arp': mac + struct.pack('!H', 0x0806) + bytes(28),
}
for k, v in fr.items():
    open(d + '/' + k + '.bin', 'wb').write(v)
PY
ip netns add $NS
for p in a b; do
	ip -n $NS link add rp${p}0 type veth peer name rp${p}1
	ip -n $NS link set rp${p}0 up
	ip -n $NS link set rp${p}1 up
done
# shellcheck disable=SC2086 # RL_AB_ARGS: words of the policy
nsenter --net=/run/netns/$NS "$A" attach rpa0 --rate 100000000 --burst 100000000 --mode skb \
	${RL_AB_ARGS:-} >/dev/null
# shellcheck disable=SC2086
nsenter --net=/run/netns/$NS "$B" attach rpb0 --rate 100000000 --burst 100000000 --mode skb \
	${RL_AB_ARGS:-} >/dev/null
ida=$(ip -n $NS -d link show rpa0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
idb=$(ip -n $NS -d link show rpb0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
run() {
	bpftool prog run id "$1" data_in "$dir/$2.bin" repeat 2000000 |
		sed -n 's/.*duration (average): \([0-9]*\)ns.*/\1/p'
}
echo "# frame round A_ns B_ns (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq 1 "${3:-5}"); do
	for f in ipv4 tcp4 vlan-ipv4 ipv6 mapped arp; do
		echo "$f $r $(run $ida $f) $(run $idb $f)"
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
