#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The size of the XDP program after the verifier, for a few policies: its
# instructions (xlated bytes / 8) and the JIT's bytes. A change to the packet
# path's shared headers (include/rl_parse.h) must leave these as they were or
# smaller:
#	bench/progsize.sh [BUILD [DUMPDIR]]	(as root; prints a table)
# With DUMPDIR, each case's translated program goes to DUMPDIR/N.txt, map ids
# and addresses blanked, so that two builds can be compared with diff -r.
# Each case attaches the limiter (skb mode) to a veth in a namespace of its
# own, reads bpftool prog show of the attached program, and detaches. No
# frame is sent.
set -e
build=${1:-build}
dump=${2:-}
n=0
B=$build/xdp-ratelimit
NS=rlbench-size-$$
cleanup() {
	nsenter --net=/run/netns/$NS "$B" detach rls0 >/dev/null 2>&1 || true
	ip netns del $NS 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add $NS
ip -n $NS link add rls0 type veth peer name rls1
ip -n $NS link set rls0 up
ip -n $NS link set rls1 up

show() {
	id=$(ip -n $NS -d link show rls0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	bpftool -j prog show id "$id" | python3 -c '
import json, sys
p = json.load(sys.stdin)
print("%-48s %6d %7d" % (sys.argv[1], p["bytes_xlated"] // 8, p["bytes_jited"]))' "$1"
	n=$((n + 1))
	[ -z "$dump" ] || bpftool prog dump xlated id "$id" |
		sed -e 's/map\[id:[0-9]*\]/map[id]/g' -e 's/0x[0-9a-f]\{8,\}/ADDR/g' \
			-e 's/^ *[0-9]*: //' -e '/^;/d' >"$dump/$n.txt"
}

run() {
	nsenter --net=/run/netns/$NS "$B" "$@" >/dev/null
}

printf '%-48s %6s %7s\n' case insns jited
for pol in "--rate 1000" "--algo gcra --rate 100mbit --burst 2500000" \
	"--algo sliding-window --rate 1000 --window 100ms" "--rate 1000 --malformed pass" \
	"--rate 1000 --syn-cookies 443"; do
	run attach rls0 --mode skb $pol
	show "$pol"
	run detach rls0
done
run attach rls0 --mode skb --rate 1000
run rule add rls0 web --proto tcp --dport 443 --tcp-flags syn --rate 20
run rule add rls0 lan --src 198.18.0.0/24 --allow
show "--rate 1000 + 2 rules (port, prefix)"
run detach rls0
