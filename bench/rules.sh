#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The per-packet cost of a packet that falls through to the default rule, with
# only the default rule and with 100,000 allow-list prefixes and 16 port rules
# in front of it (issue #12's goal: at most 1.3x). make bench runs it and
# keeps its output in bench/results/rules.txt.
#	bench/rules.sh [BUILD]		(as root)
# The limiter is attached (skb mode) to a veth in a namespace of its own and
# run with bpftool prog run (BPF_PROG_TEST_RUN); no frame is sent. Prints
# bpftool's average duration of 5,000,000 runs, three times per case, for a
# UDP frame and a TCP frame to a port no rule names.
set -e
build=${1:-build}
B=$build/xdp-ratelimit
NS=rlbench-rules-$$
dir=$(mktemp -d)
cleanup() {
	nsenter --net=/run/netns/$NS "$B" detach rlr0 >/dev/null 2>&1 || true
	ip netns del $NS 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# An IPv4 frame from 198.18.0.1 to 198.18.0.2 of protocol $1 to port 9.
frame() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
p, out = int(sys.argv[1]), sys.argv[2]
eth = bytes.fromhex('020000000002020000000001') + struct.pack('!H', 0x0800)
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 46, 1, 0, 64, p, 0, bytes([198, 18, 0, 1]),
                 bytes([198, 18, 0, 2]))
l4 = struct.pack('!HHHH', 40000, 9, 26, 0)
l4 += (bytes([0, 0, 0, 0, 0x50, 0x10]) if p == 6 else bytes(6)) + bytes(12)
open(out, 'wb').write(eth + ip + l4)
PY
}

run() {
	id=$(ip -n $NS -d link show rlr0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	for proto in udp tcp; do
		printf '  %s:' $proto
		for i in 1 2 3; do
			printf ' %s' "$(bpftool prog run id "$id" data_in "$dir/$proto.bin" \
				repeat 5000000 | sed -n 's/.*duration (average): \([0-9]*ns\).*/\1/p')"
		done
		echo
	done
}

frame 17 "$dir/udp.bin"
frame 6 "$dir/tcp.bin"
ip netns add $NS
ip -n $NS link add rlr0 type veth peer name rlr1
ip -n $NS link set rlr0 up
ip -n $NS link set rlr1 up
nsenter --net=/run/netns/$NS "$B" attach rlr0 --rate 100000000 --burst 100000000 --mode skb \
	>/dev/null
echo "default rule only:"
run
# 100,000 IPv4 /24s that do not hold the frame's source, then 16 tcp port rules.
python3 -c '
for i in range(100000):
	print("%d.%d.%d.0/24" % (10 + (i >> 16), (i >> 8) & 255, i & 255))' >"$dir/allow.txt"
t0=$(date +%s%N)
nsenter --net=/run/netns/$NS "$B" rule add rlr0 allow --src-file "$dir/allow.txt" --allow
t1=$(date +%s%N)
for i in $(seq 1 16); do
	nsenter --net=/run/netns/$NS "$B" rule add rlr0 p$i --proto tcp --dport $((1000 + i)) --deny
done
echo "100,000 allow-list prefixes (rule add: $(((t1 - t0) / 1000000)) ms) and 16 port rules:"
run
