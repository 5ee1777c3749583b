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
# 2. The same on a Redis Cluster (issue #27): 3 masters, on the loopback of
#    one receiving namespace holding the 3 limiters (the agents reach the
#    cluster by TCP, as on any host), 3 nodes, every interval.
# 3. Cost: rl-bench sync-cost, K = 3 agents in one process running the
#    agent's real round (its table, the step, the scripts) against the same
#    server, each with 1,000, 10,000 and 100,000 active sources, every source
#    on every node (the worst case: every one is sent and charged); Redis
#    commands, bytes each way, agent CPU, round time, and the server's CPU
#    (INFO), per node per interval.
# 4. Only what is shared costs (issue #27): 100,000 active sources per node,
#    of which 1,000 on every node, at a 100 ms interval: the agent's CPU,
#    the server's and the bytes per interval, for the library before the
#    claims (commit $RL_SYNC_BEFORE, 58defa5 by default: built here from git
#    with this rl-bench's sync_cost.c) and this build, side by side,
#    alternating, twice each; and this build on the cluster of part 2's
#    kind (the CPU of its 3 masters summed). The "before" is skipped with
#    RL_SYNC_BEFORE=none or outside a git checkout; RL_SYNC_BEFORE_BENCH=PATH
#    uses an rl-bench built so already.
# 5. The kernel side (bench/sync_ratio.sh): counting's per-packet cost, sync
#    on against off at 1 and 64k sources, and the drain and charge of 1,024
#    to 131,072 sources; with RL_BENCH_BASE=BUILD (a build of the base
#    commit) that build beside this one, alternating.
#
# Network safety: namespaces made here and removed on exit, addresses in
# 198.18.0.0/15 only inside them, every flow bounded by trafgen -n and
# timeout(1); the servers listen on a socket in a temporary directory, or
# (the cluster) on the loopback of a namespace made here.
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
	big=20000 big_shared=1000 reps=1
else
	node_counts="2 3 5" intervals="10ms 50ms 100ms 250ms 500ms 1s" secs=10
	sizes="1000 10000 100000" rounds=20
	big=100000 big_shared=1000 reps=2
fi
before=${RL_SYNC_BEFORE:-58defa5}
# RL_SYNC_PARTS: some of "accuracy cluster cost share kernel" (default all); with fewer,
# the results go to standard output only, as with RL_BENCH_QUICK.
parts=${RL_SYNC_PARTS:-accuracy cluster cost share kernel}
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
[ "$parts" = "accuracy cluster cost share kernel" ] || quick=1
rate=1000 burst=100

id=$(($$ % 100000))
tmp=$(mktemp -d /tmp/rl-bench-sync.XXXXXX)
ns_s=rls-s-$id
ns_c=rls-c-$id
agents=""
redis_pid=""
cluster_pids=""

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
	if [ -e "/run/netns/$ns_c" ]; then
		for i in 1 2 3 4 5; do
			nsenter --net="/run/netns/$ns_c" "$cli" detach "rcr$i" >/dev/null 2>&1 || true
		done
	fi
	[ -e "/run/netns/$ns_s" ] && ip netns del "$ns_s"
	"$cli" cleanup >/dev/null 2>&1 || true
}
cluster_down() {
	local p
	for p in $cluster_pids; do kill -KILL "$p" 2>/dev/null || true; done
	for p in $cluster_pids; do wait "$p" 2>/dev/null || true; done
	cluster_pids=""
	rm -rf "$tmp/cluster"
	[ -e "/run/netns/$ns_c" ] && ip netns del "$ns_c"
	return 0
}
cleanup() {
	set +e
	teardown
	cluster_down
	[ -n "$redis_pid" ] && kill -KILL "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sock=$tmp/redis.sock
# A script of 100,000 shared sources may run past the 5 s after which Redis
# answers BUSY to everyone else (the INFO of the bench among them).
redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --dir "$tmp" --save '' \
	--appendonly no --daemonize no --logfile "$tmp/redis.log" --busy-reply-threshold 60000 &
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

# Wait until agents 1..$1 (their logs $tmp/agentI.log) see their group.
wait_agents() {
	local i
	for i in $(seq 1 "$1"); do
		for _ in $(seq 200); do
			grep -q "node(s) live" "$tmp/agent$i.log" 2>/dev/null && break
			sleep 0.02
		done
		grep -q "node(s) live" "$tmp/agent$i.log" || die "agent $i: $(cat "$tmp/agent$i.log")"
	done
}

# 3x the limit in all, evenly over $ns_s's rss1..rss$1; $2 NAMESPACE_PREFIX|- and $3
# DEVICE_PREFIX name receiver i's device (namespace $2$i-$id, or $ns_c with -). Sets t0, t1.
flood() {
	local n=$1 i pps gap count mac p pids="" ns
	pps=$((3 * rate / n))
	# trafgen spends about 20 us per packet besides the gap (tests/lib/netns.c).
	gap=$((1000000 / pps - 20))
	count=$((pps * secs))
	for i in $(seq 1 "$n"); do
		ns=$ns_c
		[ "$2" = - ] || ns=$2$i-$id
		mac=$(ip -n "$ns" -o link show dev "$3$i" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
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
}

# One run: N receivers, interval I ("none": no agents). Writes "passed seconds" to
# $tmp/run.out (in this shell, not a subshell: cleanup must know the agents).
run_once() {
	local n=$1 iv=$2 i t0 t1 total
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
	[ "$iv" = none ] || wait_agents "$n"
	flood "$n" "rls-r" rsr
	sleep 0.1
	total=0
	for i in $(seq 1 "$n"); do
		total=$((total + $(passed_on "$i")))
	done
	teardown
	echo "$total $(echo "$t1 - $t0" | bc -l)" > "$tmp/run.out"
}

# A cluster of 3 masters (no replicas) on the loopback of namespace $ns_c,
# made here if missing; its URL in $curl.
cluster_up() {
	local i p
	cluster_down
	ip netns add "$ns_c"
	ip -n "$ns_c" link set lo up
	mkdir -p "$tmp/cluster"
	for i in 1 2 3; do
		p=$((7100 + i))
		mkdir -p "$tmp/cluster/$p"
		ip netns exec "$ns_c" redis-server --port "$p" --bind 127.0.0.1 \
			--cluster-enabled yes --cluster-config-file nodes.conf \
			--cluster-node-timeout 2000 --save '' --appendonly no --daemonize no \
			--dir "$tmp/cluster/$p" --logfile "$tmp/cluster/$p/redis.log" &
		cluster_pids="$cluster_pids $!"
	done
	for i in 1 2 3; do
		for _ in $(seq 100); do
			ip netns exec "$ns_c" redis-cli -p $((7100 + i)) PING 2>/dev/null | grep -q PONG && break
			sleep 0.05
		done
	done
	ip netns exec "$ns_c" redis-cli --cluster create 127.0.0.1:7101 127.0.0.1:7102 \
		127.0.0.1:7103 --cluster-yes >"$tmp/cluster/create.log" 2>&1 ||
		die "redis-cli --cluster create: $(cat "$tmp/cluster/create.log")"
	for _ in $(seq 200); do
		[ "$(for i in 1 2 3; do ip netns exec "$ns_c" redis-cli -p $((7100 + i)) CLUSTER INFO; done |
			grep -c 'cluster_state:ok')" = 3 ] && break
		sleep 0.05
	done
	curl="cluster://127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103"
}

# One run on the cluster: N receivers in one namespace ($ns_c, the cluster's),
# a veth pair to each from $ns_s, interval I. Writes "passed seconds" to
# $tmp/run.out.
run_once_cluster() {
	local n=$1 iv=$2 i t0 t1 total
	teardown
	ip netns add "$ns_s"
	ip -n "$ns_s" link set lo up
	for i in $(seq 1 "$n"); do
		ip link add "rss$i" netns "$ns_s" type veth peer name "rcr$i" netns "$ns_c"
		ip netns exec "$ns_s" sysctl -qw "net.ipv6.conf.rss$i.disable_ipv6=1"
		ip -n "$ns_s" link set "rss$i" up
		ip -n "$ns_c" link set "rcr$i" up
		nsenter --net="/run/netns/$ns_c" "$cli" attach "rcr$i" --rate "$rate" \
			--burst "$burst" >/dev/null
		nsenter --net="/run/netns/$ns_c" "$cli" sync "rcr$i" --redis "$curl" \
			--group "c$n-$iv-$id" --node "n$i" --interval "$iv" 2>"$tmp/agent$i.log" &
		agents="$agents $!"
	done
	wait_agents "$n"
	flood "$n" - rcr
	sleep 0.1
	total=0
	for i in $(seq 1 "$n"); do
		js=$(nsenter --net="/run/netns/$ns_c" "$cli" stats "rcr$i" --json)
		total=$((total + $(echo "$js" | sed -n 's/.*"ipv4": *\([0-9]*\).*/\1/p') - \
			$(echo "$js" | sed -n 's/.*"limited": *\([0-9]*\).*/\1/p')))
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
part accuracy || node_counts=""
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

say "accuracy on a cluster of 3 masters: 3 nodes, intervals $intervals, $secs s each"
cacc=$tmp/sync-accuracy-cluster.dat
echo "# nodes interval_ms passed seconds accuracy" > "$cacc"
cluster_up
for iv in $intervals; do
	part cluster || break
	run_once_cluster 3 "$iv"
	read -r p s < "$tmp/run.out"
	a=$(echo "$p / ($rate * $s + $burst)" | bc -l)
	ms=$(case $iv in *ms) echo "${iv%ms}" ;; *s) echo "$((${iv%s} * 1000))" ;; esac)
	printf '%s\t%s\t%s\t%.2f\t%.4f\n' 3 "$ms" "$p" "$s" "$a" >> "$cacc"
	say "  cluster, 3 nodes, every $iv: $p passed in $(printf %.2f "$s") s: $(printf %.3f "$a") x (r t + b)"
done
ckeys=$(for i in 1 2 3; do printf '%s ' "$(ip netns exec "$ns_c" redis-cli -p $((7100 + i)) DBSIZE)"; done)
say "  keys per master after the runs: $ckeys"

say "cost: 3 nodes, sources $sizes, $rounds round trips each"
cost=$tmp/sync-cost.tsv
echo "# sources shared nodes rounds sent commands exchanges tx_bytes rx_bytes agent_cpu_us rtt_ms_median rtt_ms_max failed server_cpu_us" > "$cost"
part cost || sizes=""
for n in $sizes; do
	redis-cli -s "$sock" FLUSHALL >/dev/null
	# Every source shared: the first round claims them on the first node, the others
	# share them, and its inbox gives them back 4096 a round; then 2 more.
	# At 1 s: 100,000 shared sources take longer than 100 ms a round.
	line=$("$bench" sync-cost --redis "unix://$sock" --sources "$n" --nodes 3 --rounds "$rounds" \
		--warmup $((n / 4096 + 3)) --interval 1000 --timeout 5000 --info "unix://$sock" || true)
	[ -n "$line" ] || die "sync-cost failed for $n sources"
	echo "$line" >> "$cost"
	say "  $line"
done

# Part 4: 100,000 sources per node, 1,000 of them shared; before and after, side by side.
share=$tmp/sync-share.tsv
: > "$share"
bbench=${RL_SYNC_BEFORE_BENCH:-}
if ! part share; then
	:
elif [ -n "$bbench" ]; then
	say "only what is shared costs: the 'before' column from $bbench"
elif [ "$before" != none ] && git -C "$top" cat-file -e "$before^{commit}" 2>/dev/null; then
	say "only what is shared costs: building the library at $before (the 'before' column)"
	mkdir -p "$tmp/before"
	git -C "$top" archive "$before" | tar -x -C "$tmp/before"
	cp "$here/sync_cost.c" "$tmp/before/bench/sync_cost.c"
	if make -C "$tmp/before" -j2 --no-print-directory build/rl-bench >"$tmp/before.log" 2>&1; then
		bbench=$tmp/before/build/rl-bench
	else
		say "  the build at $before failed (see below); 'before' skipped"
		tail -5 "$tmp/before.log" >&2
	fi
fi
# The claims' first rounds (10,000 a round) and 2 more, then 150 rounds: the
# claims are sent again from the 150th round of a source on (15 s at 100 ms),
# so the counted rounds include them.
warm=$(( (big - big_shared) / 10000 + 150 ))
say "only what is shared costs: $big sources per node, $big_shared shared, 3 nodes, 100 ms"
part share || reps=0
for r in $(seq 1 "$reps"); do
	if [ -n "$bbench" ]; then
		redis-cli -s "$sock" FLUSHALL >/dev/null
		# At 1 s: its rounds take longer than 100 ms, and at a 100 ms interval its
		# nodes would be stale on every source (no charge, a smaller reply).
		line=$("$bbench" sync-cost --redis "unix://$sock" --sources "$big" --shared "$big_shared" \
			--nodes 3 --rounds 3 --warmup 1 --interval 1000 --timeout 20000 \
			--info "unix://$sock" || true)
		[ -n "$line" ] && printf 'before\tredis\t%s\n' "$line" >> "$share"
		say "  before: $line"
	fi
	redis-cli -s "$sock" FLUSHALL >/dev/null
	line=$("$bench" sync-cost --redis "unix://$sock" --sources "$big" --shared "$big_shared" \
		--nodes 3 --rounds 100 --warmup "$warm" --info "unix://$sock" || true)
	[ -n "$line" ] && printf 'after\tredis\t%s\n' "$line" >> "$share"
	say "  after: $line"
done
# The same on the cluster: the masters' CPU summed.
part share && line=$(ip netns exec "$ns_c" "$bench" sync-cost --redis "$curl" --sources "$big" \
	--shared "$big_shared" --nodes 3 --rounds 100 --warmup "$warm" \
	--info redis://127.0.0.1:7101 --info redis://127.0.0.1:7102 \
	--info redis://127.0.0.1:7103 || true)
part share && [ -n "$line" ] && printf 'after\tcluster\t%s\n' "$line" >> "$share"
part share && say "  after, on the cluster: $line"
cluster_down

: > "$tmp/kernel.md"
if part kernel; then
	say "kernel side: counting per packet, drain and charge"
	"$here/sync_ratio.sh" "${RL_BENCH_BASE:--}" "$build" \
		"$( [ "$quick" = 1 ] && echo 1 || echo 3)" > "$tmp/kernel.md" ||
		die "sync_ratio.sh failed"
fi

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
	echo "## Accuracy on a Redis Cluster"
	echo
	echo "The same source and limit, 3 nodes (3 limiters of one namespace, each with its"
	echo "agent), a cluster of 3 masters on that namespace's loopback."
	echo
	echo "| nodes | $(for iv in $intervals; do printf '%s | ' "$iv"; done)"
	echo "|---|$(for _ in $intervals; do printf -- '---|'; done)"
	printf '| 3 | '
	for iv in $intervals; do
		ms=$(case $iv in *ms) echo "${iv%ms}" ;; *s) echo "$((${iv%s} * 1000))" ;; esac)
		printf '%s | ' "$(awk -v ms="$ms" '$2 == ms {printf "%.3f", $5}' "$cacc")"
	done
	echo
	echo
	echo "Keys per master after these runs: $ckeys."
	echo
	echo "## Cost per node per interval, every source shared"
	echo
	echo "3 agents, every source active on every node (each one sent and charged every"
	echo "round: the worst case); synthetic drained lists through the agent's real round"
	echo "(its table, the step, the scripts) and the real server, so the agent CPU leaves"
	echo "out the kernel's drain and charge. Server CPU from INFO, over the counted rounds."
	echo
	echo "| active sources | commands | bytes out | bytes back | agent CPU | round (median, max) | server CPU | failed |"
	echo "|---|---|---|---|---|---|---|---|"
	{ grep -v '^#' "$cost" || true; } | while IFS=$'\t' read -r src _ _ _ _ cmds _ tx rx cpu med max failed srv; do
		printf '| %s | %s | %s | %s | %s us | %s ms, %s ms | %s us | %s |\n' \
			"$src" "$cmds" "$tx" "$rx" "$cpu" "$med" "$max" "$srv" "$failed"
	done
	echo
	echo "## Only what is shared costs: $big sources per node, $big_shared shared, 100 ms"
	echo
	echo "Per node per round (3 nodes), and in % of one core at a 100 ms interval (the"
	echo "agent: one node's; the server: all 3 nodes' rounds). Before: the library at"
	echo "$before (every active source sent and stored each interval), 3 rounds after 1"
	echo "(at a 1 s interval: its rounds take longer than 100 ms);"
	echo "after: this build, 100 rounds after the claims and 150 more (the claims sent"
	echo "again are in them). Alternating, $reps of each; the agent CPU leaves out the"
	echo "kernel's drain and charge."
	echo
	echo "| build | store | sent | bytes out | bytes back | agent CPU | agent % | server CPU | server % | round (median) | failed |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	while IFS=$'\t' read -r which store _ _ _ _ sent _ _ tx rx cpu med _ failed srv; do
		printf '| %s | %s | %s | %s | %s | %s us | %.1f%% | %s us | %.1f%% | %s ms | %s |\n' \
			"$which" "$store" "$sent" "$tx" "$rx" "$cpu" "$(echo "$cpu / 1000" | bc -l)" \
			"$srv" "$(echo "3 * $srv / 1000" | bc -l)" "$med" "$failed"
	done < "$share"
	if [ -s "$tmp/kernel.md" ]; then
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
	fi
} > "$tmp/sync.md"

cat "$tmp/sync.md"
if [ "$quick" != 1 ]; then
	mkdir -p "$here/results"
	cp "$tmp/sync.md" "$here/results/sync.md"
	cp "$acc" "$here/results/sync-accuracy.dat"
	cp "$cacc" "$here/results/sync-accuracy-cluster.dat"
	cp "$share" "$here/results/sync-share.tsv"
	gnuplot -e "dat='$here/results/sync-accuracy.dat'; cdat='$here/results/sync-accuracy-cluster.dat'; out='$here/results/sync-accuracy.png'" \
		"$here/sync.gp"
	say "results in bench/results/sync.md, sync-accuracy.png"
fi
