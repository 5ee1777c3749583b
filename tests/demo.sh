#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# tests/demo.sh BUILD_DIR: shows xdp-ratelimit at work, for a newcomer.
# Builds nothing (make demo builds first). Needs root, trafgen (netsniff-ng),
# nsenter (util-linux) and iproute2.
#
# Two network namespaces joined by a veth pair; the limiter on the receiving
# end; a well-behaved source (~500 pps) and a flooding one (~50 kpps) send at
# the same time for ~10 s. All traffic stays on that veth pair and uses
# 198.18.0.0/15 (the benchmarking range) only. Everything is removed on
# every exit path, Ctrl-C included.
set -eu

build=${1:-build}
cli="$build/xdp-ratelimit"
tx=rld-$$-tx rx=rld-$$-rx
txif=rld$$t rxif=rld$$r
good_src=198.18.0.10 flood_src=198.18.0.11
secs=10
tmp=
pids=()

if [ -t 1 ]; then
	bold=$(printf '\033[1m') dim=$(printf '\033[2m') off=$(printf '\033[0m')
else
	bold= dim= off=
fi
say() { printf '%s\n' "$*"; }
step() { printf '\n%s== %s ==%s\n' "$bold" "$*" "$off"; }
# The CLI runs in the receiving namespace through nsenter, which changes the
# network namespace only: "ip netns exec" would also give it a private /sys
# without the host's bpffs, and the pins it makes would vanish with it.
rl() { nsenter --net="/run/netns/$rx" "$cli" "$@"; }
# Show a command as a user would type it, then run it.
run() {
	printf '%s$ xdp-ratelimit %s%s\n' "$dim" "$*" "$off"
	rl "$@"
}

cleanup() {
	local rc=$?

	trap - EXIT INT TERM
	for p in "${pids[@]}"; do
		kill -- "-$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [ -e "/run/netns/$rx" ]; then
		rl detach "$rxif" >/dev/null 2>&1 || true
	fi
	ip netns del "$tx" 2>/dev/null || true
	ip netns del "$rx" 2>/dev/null || true
	# Pins left by a namespace deleted before its detach: orphans, which cleanup removes.
	"$cli" cleanup >/dev/null 2>&1 || true
	[ -n "$tmp" ] && rm -rf "$tmp"
	if [ "$rc" = 0 ]; then
		say ""
		say "Cleaned up: namespaces, veth pair, XDP program and pins are gone."
	else
		say "demo: stopped (exit $rc); cleaned up." >&2
	fi
	exit "$rc"
}

if [ "$(id -u)" != 0 ]; then
	say "demo: needs root (it makes network namespaces and loads an XDP program)" >&2
	exit 1
fi
for t in "$cli" trafgen nsenter ip; do
	if ! command -v "$t" >/dev/null; then
		say "demo: '$t' not found (run 'make demo', which installs and builds what is missing)" >&2
		exit 1
	fi
done
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
fi

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d /tmp/rl-demo.XXXXXX)

step "Setting up"
ip netns add "$tx"
ip netns add "$rx"
ip link add "$txif" netns "$tx" type veth peer name "$rxif" netns "$rx"
# The sender needs no IPv6 (trafgen writes whole frames); without it, its
# kernel sends no router solicitations or MLD reports across the link.
ip netns exec "$tx" sysctl -qw "net.ipv6.conf.$txif.disable_ipv6=1"
ip -n "$tx" addr add 198.18.0.1/24 dev "$txif"
ip -n "$rx" addr add 198.18.0.2/24 dev "$rxif"
ip -n "$tx" link set "$txif" up
ip -n "$rx" link set "$rxif" up
mac=$(ip -n "$rx" -o link show dev "$rxif" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
say "Two network namespaces joined by a veth pair:"
say "  $tx ($txif, 198.18.0.1)  --->  $rx ($rxif, 198.18.0.2)"
say "The limiter goes on $rxif, the receiving end."
say ""
run attach "$rxif" --algo token-bucket --rate 1000 --burst 100
say "Each source address may send 1000 packets/s, with bursts of up to 100."

# One trafgen per source, bounded by a packet count and by timeout; each in
# its own process group so cleanup can stop it.
flow() { # name source gap count
	cat >"$tmp/$1.cfg" <<-EOF
	{ eth(da=$mac), ipv4(sa=$2, da=198.18.0.2, ttl=64), udp(sp=40000, dp=9), fill(0x00, 18) }
	EOF
	setsid timeout -k 1 "$secs" ip netns exec "$tx" \
		trafgen -o "$txif" -i "$tmp/$1.cfg" -n "$4" -t "$3" -P 1 -Q \
		>"$tmp/$1.log" 2>&1 </dev/null &
	pids+=($!)
}

step "Sending for $secs s"
say "  $good_src: well-behaved, about 500 packets/s (under its limit)"
say "  $flood_src: flooding, as fast as trafgen paces it (30,000-60,000 packets/s here)"
flow good "$good_src" 2000us 6000
flow flood "$flood_src" 5us 800000
sleep 0.5

step "Live counters, once a second"
say "RX/s is what arrives, PASS/s what the limiter lets through, DROP/s what it drops."
run stats "$rxif" --watch 1 --count 8
say ""
say "Roughly 1000 + 500 pass each second: the flooder gets its 1000, the"
say "well-behaved source all of its ~500; the rest of the flood is dropped"
say "at XDP, before the kernel spends anything on it."

step "The sources nearest to their limit (while the flood is still on)"
run top "$rxif"
say ""
say "USED is how much of its burst a source has spent: the flooder is at ~100%"
say "(CREDIT near 0, every packet over the limit is dropped), the well-behaved"
say "source near 0%: it never came close, so none of its packets were dropped."

wait "${pids[@]}" 2>/dev/null || true
pids=()
sent() { tr '\r' '\n' <"$tmp/$1.log" | sed -n 's/^ *\([0-9][0-9]*\) packets outgoing.*/\1/p'; }
good=$(sent good) flood=$(sent flood)

step "Totals"
run stats "$rxif"
json=$(rl stats "$rxif" --json)
field() { printf '%s\n' "$json" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
passed=$(field passed) dropped=$(field dropped)
say ""
say "trafgen sent ${good:-?} packets from $good_src and ${flood:-?} from $flood_src."
if [ -n "$good" ] && [ -n "$flood" ] && [ -n "$passed" ]; then
	say "Of the $passed passed, $good are the well-behaved source's (all it sent) and"
	say "$((passed - good)) the flood's: its burst of 100 plus 1000 for each second it ran."
	say "The $dropped dropped are the rest of the flood ($flood - $((passed - good)) = $((flood - passed + good)))."
fi
say ""
say "Try next: 'xdp-ratelimit set IFACE --rate 5000' changes a running limiter"
say "live; '--action dry-run' counts would_drop without dropping anything."
