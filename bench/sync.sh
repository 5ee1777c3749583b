#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Fleet sync (issue #14): accuracy against the interval, and the cost of a
# round trip. Part of make bench (bench/run.sh calls it); alone:
#	bench/sync.sh [BUILD]		(as root)
# RL_BENCH_QUICK=1: a short run (fewer intervals and nodes, 3 s each); its
# results go to standard output only, never to bench/results/sync.md.
#
# 1. Accuracy: one sending namespace with a veth pair to each of N receiving
#    namespaces (N = 2, 3, 5), each with its own limiter (token-bucket 1000/s,
#    burst 100) and its own agent, all syncing through one redis-server's
#    socket; one source (198.18.0.1) sent to every receiver evenly, at 3x the
#    limit in all, for T s. Accuracy = what all receivers passed / (r t + b),
#    t measured (trafgen's pace is not exactly its gap). Once per N without
#    agents, for comparison.
# 2. Cost: rl-bench sync-cost, K = 3 agents in one process running the real
#    step and the real script against the same server, each with 1,000,
#    10,000 and 100,000 active sources (synthetic drained lists, every source
#    on every node: the reply carries them all); Redis commands, bytes each
#    way, agent CPU, round trip time, and the server's CPU (INFO), per node
#    per interval.
# 3. The kernel side (bench/sync_ratio.sh): counting's per-packet cost, sync
#    on against off at 1 and 64k sources, and the drain and charge of 1,024
#    to 131,072 sources; with RL_BENCH_BASE=BUILD (a build of the base
#    commit) that build beside this one, alternating.
#
# Network safety: namespaces made here and removed on exit, addresses in
# 198.18.0.0/15 only inside them, every flow bounded by trafgen -n and
# timeout(1); the server listens on a socket in a temporary directory only.
set -euo pipefail

build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
quick=${RL_BENCH_QUICK:-0}
case $build in /*) ;; *) build=$top/$build ;; esac
cli=$build/xdp-ratelimit
bench=$build/rl-bench

die() { echo "bench sync: $*" >&2; exit 1; }
say() { echo "bench sync: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF, namespaces, XDP)"
for t in redis-server redis-cli trafgen nsenter ip gnuplot; do
	command -v "$t" >/dev/null || die "$t is missing (make deps; bench/run.sh installs gnuplot)"
done
[ -x "$cli" ] && [ -x "$bench" ] || make --no-print-directory BUILD="$build" "$build/xdp-ratelimit" \
	"$build/rl-bench" >&2
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

if [ "$quick" = 1 ]; then
	node_counts="2 3" intervals="10ms 100ms 1s" secs=3 sizes="1000 10000" rounds=3
else
	node_counts="2 3 5" intervals="10ms 50ms 100ms 250ms 500ms 1s" secs=10
	sizes="1000 10000 100000" rounds=20
fi
rate=1000 burst=100

id=$(($$ % 100000))
tmp=$(mktemp -d /tmp/rl-bench-sync.XXXXXX)
ns_s=rls-s-$id
agents=""
redis_pid=""

teardown() {
	local p n
	for p in $agents; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $agents; do wait "$p" 2>/dev/null || true; done
	agents=""
	for n in /run/netns/rls-r*-"$id"; do
		[ -e "$n" ] || continue
		# Detach first: a namespace goes away asynchronously, and until it
		# has, cleanup sees its maps in use and keeps their pins.
		for i in 1 2 3 4 5; do
			nsenter --net="$n" "$cli" detach "rsr$i" >/dev/null 2>&1 || true
		done
		ip netns del "$(basename "$n")" 2>/dev/null || true
	done
	[ -e "/run/netns/$ns_s" ] && ip netns del "$ns_s"
	"$cli" cleanup >/dev/null 2>&1 || true
}
cleanup() {
	set +e
	teardown
	[ -n "$redis_pid" ] && kill -KILL "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sock=$tmp/redis.sock
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --dir "$tmp" --save '' \
	--appendonly no --daemonize no --logfile "$tmp/redis.log" &
redis_pid=$!
for _ in $(seq 100); do
	redis-cli -s "$sock" PING 2>/dev/null | grep -q PONG && break
	sleep 0.05
done
redis-cli -s "$sock" PING | grep -q PONG || die "redis-server did not start"

# The source's passes on receiver I: rate-limited IPv4 frames less the limited ones.
passed_on() {
	local js ipv4 lim
	js=$(nsenter --net="/run/netns/rls-r$1-$id" "$cli" stats "rsr$1" --json)
	ipv4=$(echo "$js" | sed -n 's/.*"ipv4": *\([0-9]*\).*/\1/p')
	lim=$(echo "$js" | sed -n 's/.*"limited": *\([0-9]*\).*/\1/p')
	echo $((ipv4 - lim))
}

# One run: N receivers, interval I ("none": no agents). Writes "passed seconds" to
# $tmp/run.out (in this shell, not a subshell: cleanup must know the agents).
run_once() {
	local n=$1 iv=$2 i pps gap count mac t0 t1 total p pids=""
	teardown
	ip netns add "$ns_s"
	ip -n "$ns_s" link set lo up
	for i in $(seq 1 "$n"); do
		ip netns add "rls-r$i-$id"
		ip link add "rss$i" netns "$ns_s" type veth peer name "rsr$i" netns "rls-r$i-$id"
		ip netns exec "$ns_s" sysctl -qw "net.ipv6.conf.rss$i.disable_ipv6=1"
		ip -n "$ns_s" addr add "198.18.$i.1/24" dev "rss$i"
		ip -n "rls-r$i-$id" addr add "198.18.$i.2/24" dev "rsr$i"
		ip -n "rls-r$i-$id" link set lo up
		ip -n "$ns_s" link set "rss$i" up
		ip -n "rls-r$i-$id" link set "rsr$i" up
		nsenter --net="/run/netns/rls-r$i-$id" "$cli" attach "rsr$i" --rate "$rate" \
			--burst "$burst" >/dev/null
		if [ "$iv" != none ]; then
			nsenter --net="/run/netns/rls-r$i-$id" "$cli" sync "rsr$i" \
				--redis "unix://$sock" --group "b$n-$iv" --node "n$i" --interval "$iv" \
				2>"$tmp/agent$i.log" &
			agents="$agents $!"
		fi
	done
	if [ "$iv" != none ]; then
		for i in $(seq 1 "$n"); do
			for _ in $(seq 200); do
				grep -q "node(s) live" "$tmp/agent$i.log" 2>/dev/null && break
				sleep 0.02
			done
			grep -q "node(s) live" "$tmp/agent$i.log" || die "agent $i: $(cat "$tmp/agent$i.log")"
		done
	fi
	# 3x the limit in all, evenly.
	pps=$((3 * rate / n))
	# trafgen spends about 20 us per packet besides the gap (tests/lib/netns.c).
	gap=$((1000000 / pps - 20))
	count=$((pps * secs))
	for i in $(seq 1 "$n"); do
		mac=$(ip -n "rls-r$i-$id" -o link show dev "rsr$i" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
		echo "{ eth(da=$mac), ipv4(sa=198.18.0.1, da=198.18.$i.2, ttl=64), udp(sp=40000, dp=9), fill(0x00, 18) }" \
			> "$tmp/flow$i.cfg"
	done
	t0=$(date +%s.%N)
	for i in $(seq 1 "$n"); do
		timeout -k 1 $((secs * 2 + 10)) ip netns exec "$ns_s" trafgen -o "rss$i" \
			-i "$tmp/flow$i.cfg" -n "$count" -t "${gap}us" -P 1 -Q >/dev/null 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || true; done
	t1=$(date +%s.%N)
	sleep 0.1
	total=0
	for i in $(seq 1 "$n"); do
		total=$((total + $(passed_on "$i")))
	done
	teardown
	echo "$total $(echo "$t1 - $t0" | bc -l)" > "$tmp/run.out"
}

command -v bc >/dev/null || die "bc is missing"
say "accuracy: $node_counts nodes, intervals $intervals, $secs s each"
acc=$tmp/sync-accuracy.dat
echo "# nodes interval_ms passed seconds accuracy" > "$acc"
base=$tmp/sync-baseline.txt
: > "$base"
for n in $node_counts; do
	run_once "$n" none
	read -r p s < "$tmp/run.out"
	a=$(echo "$p / ($rate * $s + $burst)" | bc -l)
	printf '%s\t%s\t%.2f\t%.3f\n' "$n" "$p" "$s" "$a" >> "$base"
	say "  $n nodes, no agents: $p passed in $(printf %.2f "$s") s: $(printf %.3f "$a") x (r t + b)"
	for iv in $intervals; do
		run_once "$n" "$iv"
		read -r p s < "$tmp/run.out"
		a=$(echo "$p / ($rate * $s + $burst)" | bc -l)
		ms=$(case $iv in *ms) echo "${iv%ms}" ;; *s) echo "$((${iv%s} * 1000))" ;; esac)
		printf '%s\t%s\t%s\t%.2f\t%.4f\n' "$n" "$ms" "$p" "$s" "$a" >> "$acc"
		say "  $n nodes, every $iv: $p passed in $(printf %.2f "$s") s: $(printf %.3f "$a") x (r t + b)"
	done
done

say "cost: 3 nodes, sources $sizes, $rounds round trips each"
cost=$tmp/sync-cost.tsv
echo "# sources nodes rounds commands tx_bytes rx_bytes agent_cpu_us rtt_ms_median rtt_ms_max failed server_cpu_ms" > "$cost"
srv_cpu() {
	redis-cli -s "$sock" INFO cpu | tr -d '\r' |
		awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {printf "%.6f", s}'
}
for n in $sizes; do
	redis-cli -s "$sock" FLUSHALL >/dev/null
	c0=$(srv_cpu)
	line=$("$bench" sync-cost --redis "unix://$sock" --sources "$n" --nodes 3 --rounds "$rounds" || true)
	c1=$(srv_cpu)
	[ -n "$line" ] || die "sync-cost failed for $n sources"
	# Round 0 (filling) is in the server's CPU too: rounds + 1 per node.
	srv=$(echo "($c1 - $c0) * 1000 / (3 * ($rounds + 1))" | bc -l)
	printf '%s\t%.2f\n' "$line" "$srv" >> "$cost"
	say "  $(printf '%s\t%.2f' "$line" "$srv")"
done

say "kernel side: counting per packet, drain and charge"
"$here/sync_ratio.sh" "${RL_BENCH_BASE:--}" "$build" "$( [ "$quick" = 1 ] && echo 1 || echo 3)" \
	> "$tmp/kernel.md" || die "sync_ratio.sh failed"

{
	echo "# Fleet sync: accuracy and cost"
	echo
	echo "Measured by bench/sync.sh on $(date -u +%Y-%m-%d) ($( [ "$quick" = 1 ] && echo quick || echo full) run):"
	echo "kernel $(uname -r), $(nproc) CPUs, redis-server $(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p'),"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "## Accuracy: total passed / (r t + b)"
	echo
	echo "One source at 3x its limit (token-bucket $rate/s, burst $burst) sent evenly to every"
	echo "node for $secs s; each node its own limiter and agent, one redis-server (local socket)."
	echo
	echo "| nodes | no agents | $(for iv in $intervals; do printf '%s | ' "$iv"; done)"
	echo "|---|---|$(for _ in $intervals; do printf -- '---|'; done)"
	for n in $node_counts; do
		printf '| %s | %s | ' "$n" "$(awk -v n="$n" '$1 == n {print $4}' "$base")"
		for iv in $intervals; do
			ms=$(case $iv in *ms) echo "${iv%ms}" ;; *s) echo "$((${iv%s} * 1000))" ;; esac)
			printf '%s | ' "$(awk -v n="$n" -v ms="$ms" '$1 == n && $2 == ms {printf "%.3f", $5}' "$acc")"
		done
		echo
	done
	echo
	echo "## Cost per node per interval"
	echo
	echo "3 agents, every source active on every node (the reply carries all: the worst"
	echo "case); synthetic drained lists through the real agent step, script and server, so"
	echo "the agent CPU leaves out the kernel's drain and charge. Server CPU from INFO."
	echo
	echo "| active sources | commands | bytes out | bytes back | agent CPU | round trip (median, max) | server CPU | failed |"
	echo "|---|---|---|---|---|---|---|---|"
	grep -v '^#' "$cost" | while IFS=$'\t' read -r src _ _ cmds tx rx cpu med max failed srv; do
		printf '| %s | %s | %s | %s | %s us | %s ms, %s ms | %s ms | %s |\n' \
			"$src" "$cmds" "$tx" "$rx" "$cpu" "$med" "$max" "$srv" "$failed"
	done
	echo
	echo "## The kernel side: counting per packet, drain and charge"
	echo
	echo "Per packet: the program with sync counting on against the same program off, on the"
	echo "same maps, every packet passing (so counted), no drain (every counter holds units);"
	echo "net of the driver, three instances' maps, median over rounds and instances. The drain"
	echo "and the charge of one interval of N sources that each passed a packet, on a limiter of"
	echo "the default size (a million sources). bench/sync_ratio.sh; 'before' is"
	echo "RL_BENCH_BASE's build when given."
	echo
	cat "$tmp/kernel.md"
} > "$tmp/sync.md"

cat "$tmp/sync.md"
if [ "$quick" != 1 ]; then
	mkdir -p "$here/results"
	cp "$tmp/sync.md" "$here/results/sync.md"
	cp "$acc" "$here/results/sync-accuracy.dat"
	gnuplot -e "dat='$here/results/sync-accuracy.dat'; out='$here/results/sync-accuracy.png'" \
		"$here/sync.gp"
	say "results in bench/results/sync.md, sync-accuracy.png"
fi
