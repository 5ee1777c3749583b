#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The cost of a drop for two builds side by side (issue #30: the drop path
# notes its source for top in rl_hot):
#	bench/drop_cost.sh BASE_BUILD NEW_BUILD [RUNS] [ROUNDS] [REPS]	(as root)
# Each run is `rl-bench micro --only sampling` of one build (part 5: one
# source at 1 packet/s, burst 1, every frame dropped, BPF_PROG_TEST_RUN),
# the builds alternating, RUNS of each (default 5). Its "sampling off" row
# is the drop path alone, ns per drop net of the driver. Prints each run's
# figure, each build's median and new / base. RL_BENCH_DROP_SOURCES=N (a
# power of two up to 131072) drops N sources in turn, each over its limit,
# instead of one (both builds' rl-bench must read it: bench/micro.c).
#
# Network safety: one veth pair in a namespace made here, removed on exit;
# nothing is sent (BPF_PROG_TEST_RUN frames only).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BASE_BUILD NEW_BUILD [RUNS] [ROUNDS] [REPS]" >&2; exit 2; }
base=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
runs=${3:-5} rounds=${4:-9} reps=${5:-300000}
[ "$(id -u)" = 0 ] || { echo "drop_cost: must run as root" >&2; exit 1; }
id=$(($$ % 100000))
ns=rldc-$id
tmp=$(mktemp -d /tmp/rl-drop-cost.XXXXXX)
cleanup() {
	set +e
	[ -e "/run/netns/$ns" ] && ip netns del "$ns"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited 2>/dev/null || true
ip netns add "$ns"
ip -n "$ns" link add rda$id type veth peer name rdb$id
ip -n "$ns" link set rda$id up
ip -n "$ns" link set rdb$id up
load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$tmp/all"
for r in $(seq "$runs"); do
	for side in base new; do
		b=$base
		[ $side = new ] && b=$new
		ip netns exec "$ns" timeout 600 "$b/rl-bench" --ifname rda$id micro --only sampling \
			--out "$tmp/$side$r" --rounds "$rounds" --reps "$reps" >/dev/null 2>&1
		v=$(awk -F'|' '$2 ~ /drop, sampling off/ { gsub(/ /, "", $3); print $3 }' \
			"$tmp/$side$r/sampling.md")
		echo "$side $r $v" | tee -a "$tmp/all" >&2
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
awk -v src="${RL_BENCH_DROP_SOURCES:-1} source(s) in turn, each" -v l0="$load0" -v l1="$load1" -v runs="$runs" -v rounds="$rounds" -v reps="$reps" '
function med(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1] = v[$1] " " $3 }
END {
	printf "A dropped frame, %s over its limit, ns net of the driver: %d alternating runs of each build, each %d rounds of %d (load average %s at start, %s at end)\n\n", src, runs, rounds, reps, l0, l1
	print "| build | each run | median |"
	print "|---|---|---|"
	printf "| base |%s | %.2f |\n", v["base"], med(v["base"])
	printf "| new |%s | %.2f |\n", v["new"], med(v["new"])
	printf "\nnew / base: %.3f\n", med(v["new"]) / med(v["base"])
}' "$tmp/all"
