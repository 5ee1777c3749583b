#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What top costs with a full table, against an empty one, for one build or
# two side by side (issue #30):
#	bench/top_scale.sh [ROUNDS] [SOURCES] [BASE_BUILD] BUILD	(as root)
# Each build attaches its own limiter (--rate 100 --burst 10, the default
# --max-sources of 1,048,576) to a veth of its own, filled with SOURCES IPv4
# sources (default 1,048,576) by `rl-bench fill`, and another to an empty
# one. ROUNDS rounds (default 7) of "top IFACE -n 20", all of them
# alternating; per build the median time on the full and on the empty
# table, and the ratios: full / empty within each build, and with two
# builds BUILD / BASE_BUILD on the full table. Prints markdown.
#
# Network safety: veth pairs inside one namespace made here and removed on
# exit; nothing is sent (rl-bench fill runs BPF_PROG_TEST_RUN frames, sources
# above 128k from 10.0.0.0/8 in those frames only).
set -euo pipefail
rounds=7 sources=1048576
case "${1:-}" in [0-9]*) rounds=$1; shift ;; esac
case "${1:-}" in [0-9]*) sources=$1; shift ;; esac
[ $# -eq 1 ] || [ $# -eq 2 ] ||
	{ echo "usage: $0 [ROUNDS] [SOURCES] [BASE_BUILD] BUILD" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "top_scale: must run as root" >&2; exit 1; }
builds=()
for b in "$@"; do builds+=("$(cd "$b" && pwd)"); done
side=(base new)
[ $# -eq 1 ] && side=(new)
nb=$#
new=${builds[$((nb - 1))]}
for b in "${builds[@]}"; do
	[ -x "$b/xdp-ratelimit" ] && [ -x "$b/rl-bench" ] ||
		{ echo "top_scale: $b needs xdp-ratelimit and rl-bench" >&2; exit 1; }
done
id=$(($$ % 100000))
ns=rlts-$id
tmp=$(mktemp -d /tmp/rl-top-scale.XXXXXX)
cleanup() {
	set +e
	for i in $(seq 0 $((2 * nb - 1))); do
		nsenter --net="/run/netns/$ns" "${builds[$((i / 2))]}/xdp-ratelimit" detach "ts$i" \
			>/dev/null 2>&1
	done
	[ -e "/run/netns/$ns" ] && ip netns del "$ns"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited 2>/dev/null || true
ip netns add "$ns"
# ts0/ts1: the first build's full/empty table; ts2/ts3: the second's (peers tp0..tp3).
ifs=$(seq 0 $((2 * nb - 1)))
for i in $ifs; do
	ip -n "$ns" link add "ts$i" type veth peer name "tp$i"
	ip -n "$ns" link set "ts$i" up
	ip -n "$ns" link set "tp$i" up
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
run() { nsenter --net="/run/netns/$ns" "$@"; }
for i in $ifs; do
	run "${builds[$((i / 2))]}/xdp-ratelimit" attach "ts$i" --rate 100 --burst 10 >/dev/null
done
for i in $(seq 0 2 $((2 * nb - 1))); do
	b=${builds[$((i / 2))]}
	run "$b/rl-bench" fill --iface "ts$i" --sources "$sources" >/dev/null
	run "$b/xdp-ratelimit" stats "ts$i" --json | grep -o '"sources":[0-9]*' |
		sed "s/.*:/ts$i sources tracked: /" >&2
done
: >"$tmp/times"
for r in $(seq "$rounds"); do
	for i in $ifs; do
		b=${builds[$((i / 2))]} s=${side[$((i / 2))]}
		table=full
		[ $((i % 2)) = 1 ] && table=empty
		t0=$(date +%s%N)
		run "$b/xdp-ratelimit" top "ts$i" -n 20 >"$tmp/out$i"
		t1=$(date +%s%N)
		echo "$s $table $(((t1 - t0) / 1000))" >>"$tmp/times"
	done
done
run "$new/xdp-ratelimit" top "ts$((2 * nb - 2))" -n 20 --json | grep -o '"read":{[^}]*}' >"$tmp/read" || true
load1=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v nb="$nb" -v dirs="$*" -v rounds="$rounds" -v sources="$sources" -v l0="$load0" -v l1="$load1" -v read="$(cat "$tmp/read")" '
function med(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ t[$1, $2] = t[$1, $2] " " $3 }
END {
	for (k in t) m[k] = med(t[k])
	printf "top -n 20, %d sources against an empty table, %d interleaved rounds (load average %s at start, %s at end)\n\n", sources, rounds, l0, l1
	print "| build | full table, ms (median) | empty table, ms | full / empty |"
	print "|---|---|---|---|"
	nb = split(nb == 1 ? "new" : "base new", B, " ")
	split(dirs, D, " ")
	for (i = 1; i <= nb; i++)
		printf "| %s (%s) | %.1f | %.1f | %.1fx |\n", B[i], D[i], m[B[i], "full"] / 1000, m[B[i], "empty"] / 1000, m[B[i], "full"] / m[B[i], "empty"]
	if (nb == 2) printf "\nnew / base on the full table: %.3f\n", m["new", "full"] / m["base", "full"]
	if (read != "") printf "\nwhat the new build read on the full table: %s\n", read
}' "$tmp/times"
