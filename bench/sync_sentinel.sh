#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Fleet sync through Redis Sentinel (issue #27): accuracy against the
# interval, with and without a failover. Part of make bench (bench/run.sh
# calls it); alone:
#	bench/sync_sentinel.sh [BUILD]		(as root)
# RL_BENCH_QUICK=1: a short run (two intervals, one round, 8 s each); its
# results go to standard output only, never to bench/results/.
#
# One sending namespace and one receiving namespace joined by 3 veth pairs;
# on each receiving end a limiter (token-bucket 1000/s, burst 100) and its
# agent, all through sentinel:// to a master, its replica and three
# sentinels on the receiving namespace's loopback (down-after-milliseconds
# 1000, as tests/lib/sentinel_srv.c). One source (198.18.3.7) paced at 2000
# pps on each pair, 6x its limit in all (3-5x under load), for T s. For each interval, three runs
# side by side: steady (nothing fails), and the master SIGKILLed after T/3 s
# with --fallback share, then with --fallback local; all intervals and kinds
# once per round, rounds one after another. Accuracy = what all limiters
# passed / (r t + b), t measured. Switch = from the kill until the last
# agent's first round trip on the new master (the new master's own record of
# it); named = until a sentinel names it (the leader's log).
#
# Network safety: namespaces made here and removed on exit, addresses in
# 198.18.0.0/15 only inside them, every flow bounded by trafgen -n and
# timeout(1); the servers listen on the receiving namespace's loopback only.
set -euo pipefail

build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
quick=${RL_BENCH_QUICK:-0}
case $build in /*) ;; *) build=$top/$build ;; esac
cli=$build/xdp-ratelimit

die() { echo "bench sync_sentinel: $*" >&2; exit 1; }
say() { echo "bench sync_sentinel: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF, namespaces, XDP)"
for t in redis-server redis-sentinel redis-cli trafgen nsenter ip gnuplot bc timeout; do
	command -v "$t" >/dev/null || die "$t is missing (make deps; bench/run.sh installs gnuplot)"
done
[ -x "$cli" ] || make --no-print-directory BUILD="$build" "$build/xdp-ratelimit" >&2
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

if [ "$quick" = 1 ]; then
	intervals="100ms 1s" secs=8 rounds=1
else
	intervals="50ms 100ms 250ms 500ms 1s" secs=12 rounds=2
fi
kinds=${RL_SENTINEL_KINDS:-"steady share local"}
n=3 rate=1000 burst=100
kill_at=$((secs / 3))

id=$(($$ % 100000))
tmp=$(mktemp -d /tmp/rl-bench-sentinel.XXXXXX)
ns_s=rlq-s-$id ns_r=rlq-r-$id
agents="" servers="" flows="" master_pid=""

teardown() {
	local p i
	for p in $flows; do kill -KILL "$p" 2>/dev/null || true; done
	for p in $agents; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $agents $flows; do wait "$p" 2>/dev/null || true; done
	for p in $servers; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
	for p in $servers; do wait "$p" 2>/dev/null || true; done
	agents="" servers="" flows=""
	if [ -e "/run/netns/$ns_r" ]; then
		# Nothing of ours outlives its namespace.
		for p in $(ip netns pids "$ns_r" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
		# Detach first: until a namespace is gone, cleanup sees its maps in use.
		for i in $(seq 1 "$n"); do
			nsenter --net="/run/netns/$ns_r" "$cli" detach "rqr$i" >/dev/null 2>&1 || true
		done
		ip netns del "$ns_r"
	fi
	[ -e "/run/netns/$ns_s" ] && ip netns del "$ns_s"
	"$cli" cleanup >/dev/null 2>&1 || true
}
cleanup() {
	set +e
	teardown
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

inr() { nsenter --net="/run/netns/$ns_r" "$@"; }
rcli() { inr timeout -k 1 3 redis-cli -h 127.0.0.1 "$@" 2>/dev/null; }

# The master (6379), its replica (6380), three sentinels (26379-26381) in ns_r.
start_servers() {
	local d=$tmp/srv i p
	rm -rf "$d"
	mkdir -p "$d"
	for i in 0 1; do
		p=$((6379 + i))
		# nsenter execs the server: $! is its pid (a function would be a subshell's).
		nsenter --net="/run/netns/$ns_r" redis-server --port "$p" --bind 127.0.0.1 --dir "$d" --dbfilename "r$i.rdb" \
			--save '' --appendonly no --daemonize no --logfile "$d/r$i.log" \
			--repl-diskless-sync-delay 0 $([ "$i" = 1 ] && echo "--replicaof 127.0.0.1 6379") &
		servers="$servers $!"
		[ "$i" = 0 ] && master_pid=$!
		for _ in $(seq 100); do
			rcli -p "$p" PING | grep -q PONG && break
			sleep 0.05
		done
	done
	# The sentinels learn the replica from the master's INFO when they connect.
	for _ in $(seq 100); do
		rcli -p 6379 INFO replication | grep -q '^slave0:' && break
		sleep 0.05
	done
	for i in 0 1 2; do
		p=$((26379 + i))
		printf '%s\n' "port $p" "bind 127.0.0.1" "daemonize no" "logfile $d/s$i.log" "dir $d" \
			"sentinel monitor rlt 127.0.0.1 6379 2" \
			"sentinel down-after-milliseconds rlt 1000" \
			"sentinel failover-timeout rlt 3000" > "$d/s$i.conf"
		nsenter --net="/run/netns/$ns_r" redis-sentinel "$d/s$i.conf" &
		servers="$servers $!"
	done
	for i in 0 1 2; do
		for _ in $(seq 100); do
			rcli -p $((26379 + i)) PING | grep -q PONG && break
			sleep 0.05
		done
	done
}

# Every sentinel knows the replica and the two others (at most 10 s).
sentinels_ready() {
	local i out ok
	for _ in $(seq 100); do
		ok=1
		for i in 0 1 2; do
			out=$(rcli -p $((26379 + i)) SENTINEL master rlt | paste - - | tr '\t' ' ')
			echo "$out" | grep -q '^num-slaves 1$' || ok=0
			echo "$out" | grep -q '^num-other-sentinels 2$' || ok=0
		done
		[ "$ok" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

# The source's frames on limiter I.
ipv4_on() {
	inr "$cli" stats "rqr$1" --json | sed -n 's/.*"ipv4": *\([0-9]*\).*/\1/p'
}

# The source's passes on limiter I: IPv4 frames less the limited ones.
passed_on() {
	local js ipv4 lim
	js=$(inr "$cli" stats "rqr$1" --json)
	ipv4=$(echo "$js" | sed -n 's/.*"ipv4": *\([0-9]*\).*/\1/p')
	lim=$(echo "$js" | sed -n 's/.*"limited": *\([0-9]*\).*/\1/p')
	echo $((ipv4 - lim))
}

# Each node's round trips on the new master after @1 (ms of the host's clock),
# as lines "nI MS": its rl:{@2}:nodes holds each node's last round trip in the
# server's TIME, the host's clock. Values from before the kill were replicated
# from the old master.
new_writes() {
	rcli -p 6380 HGETALL "rl:{$2}:nodes" | paste - - | awk -v t="$1" '$2 > t { print $1, $2 }'
}

# When a sentinel first named the new master (ms): the leader's log line for
# the failover state from which SENTINEL get-master-addr-by-name answers the
# promoted replica (sentinelGetCurrentMasterAddress() in Redis), or -1.
named_at() {
	local line ms best=-1
	while read -r line; do
		ms=$(date -d "$line" +%s%3N 2>/dev/null) || continue
		if [ "$best" = -1 ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
	done < <(grep -h -- '+failover-state-reconf-slaves' "$tmp"/srv/s?.log 2>/dev/null |
		awk '{ print $2, $3, $4, $5 }')
	echo "$best"
}

# One run: interval IV, KIND steady / share / local. Writes "passed seconds switch named".
run_once() {
	local iv=$1 kind=$2 i mac pids="" t0 t1 tk now sw=() left last w node named=-1 before after fb
	local sw_t=-1 offered
	teardown
	ip netns add "$ns_s"
	ip netns add "$ns_r"
	ip -n "$ns_s" link set lo up
	ip -n "$ns_r" link set lo up
	start_servers
	for i in $(seq 1 "$n"); do
		ip link add "rqs$i" netns "$ns_s" type veth peer name "rqr$i" netns "$ns_r"
		ip netns exec "$ns_s" sysctl -qw "net.ipv6.conf.rqs$i.disable_ipv6=1"
		ip -n "$ns_s" link set "rqs$i" up
		ip -n "$ns_r" link set "rqr$i" up
		inr "$cli" attach "rqr$i" --rate "$rate" --burst "$burst" >/dev/null
	done
	fb=$([ "$kind" = local ] && echo local || echo share)
	for i in $(seq 1 "$n"); do
		nsenter --net="/run/netns/$ns_r" "$cli" sync "rqr$i" \
			--redis "sentinel://127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381/rlt" \
			--group "q$iv" --node "n$i" --interval "$iv" --fallback "$fb" \
			2>"$tmp/agent$i.log" &
		agents="$agents $!"
	done
	for i in $(seq 1 "$n"); do
		for _ in $(seq 250); do
			grep -q "node(s) live" "$tmp/agent$i.log" 2>/dev/null && break
			sleep 0.02
		done
		grep -q "node(s) live" "$tmp/agent$i.log" || die "agent $i: $(cat "$tmp/agent$i.log")"
	done
	for i in $(seq 1 "$n"); do
		mac=$(ip -n "$ns_r" -o link show dev "rqr$i" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
		echo "{ eth(da=$mac), ipv4(sa=198.18.3.7, da=198.18.0.2, ttl=64), udp(sp=40000, dp=9), fill(0x00, 18) }" \
			> "$tmp/flow$i.cfg"
	done
	before=0
	for i in $(seq 1 "$n"); do before=$((before + $(passed_on "$i"))); done
	t0=$(date +%s.%N)
	for i in $(seq 1 "$n"); do
		# Paced at 2000 pps (trafgen spends about 20 us per packet besides the gap,
		# tests/lib/netns.c), stopped by the clock: under load trafgen keeps half
		# its pace and stalls now and then, and the source must still offer
		# several times its limit throughout (as in tests/test_sync_sentinel.c).
		timeout -k 1 "$secs" ip netns exec "$ns_s" trafgen -o "rqs$i" \
			-i "$tmp/flow$i.cfg" -n $((2 * rate * (secs + 5))) -t 480us -P 1 -Q \
			>/dev/null 2>&1 &
		pids="$pids $!"
	done
	flows=$pids
	if [ "$kind" != steady ]; then
		sentinels_ready || die "the sentinels did not meet"
		now=$(date +%s.%N)
		sleep "$(echo "$t0 + $kill_at - $now" | bc -l | sed 's/^-.*/0/')"
		# (waited for here, quietly: bash would report the kill on stderr)
		{ kill -KILL "$master_pid" && wait "$master_pid"; } 2>/dev/null || true
		# Once it is dead: what the replica has from it is all older than this.
		tk=$(date +%s%3N)
		left=$n
		sw=(0 0 0 0)
		last=0
		# One query a turn: the first value seen of a node is its first round
		# trip there, or one a turn later (one interval or two).
		while [ "$left" -gt 0 ] && [ $(($(date +%s%3N) - tk)) -lt 10000 ]; do
			while read -r node w; do
				i=${node#n}
				[ "${sw[$i]:-1}" = 0 ] || continue
				sw[$i]=$w
				[ "$w" -gt "$last" ] && last=$w
				left=$((left - 1))
			done < <(new_writes "$tk" "q$iv")
			sleep 0.02
		done
		[ "$left" = 0 ] && sw_t=$(echo "($last - $tk) / 1000" | bc -l)
		w=$(named_at)
		[ "$w" = -1 ] || named=$(echo "($w - $tk) / 1000" | bc -l)
	fi
	for p in $pids; do wait "$p" || true; done
	flows=""
	t1=$(date +%s.%N)
	offered=0
	for i in $(seq 1 "$n"); do offered=$((offered + $(ipv4_on "$i"))); done
	sleep 0.1
	after=0
	for i in $(seq 1 "$n"); do after=$((after + $(passed_on "$i"))); done
	echo "$((after - before)) $(echo "$t1 - $t0" | bc -l) $sw_t $named $offered" > "$tmp/run.out"
	teardown
}

say "intervals $intervals, $kinds, $secs s each, master killed at $kill_at s, $rounds round(s)"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
dat=$tmp/sync-sentinel.dat
echo "# round interval_ms kind passed seconds accuracy switch_s named_s offered_x" > "$dat"
for r in $(seq 1 "$rounds"); do
	for iv in $intervals; do
		ms=$(case $iv in *ms) echo "${iv%ms}" ;; *s) echo "$((${iv%s} * 1000))" ;; esac)
		for kind in $kinds; do
			run_once "$iv" "$kind"
			read -r p s sw nm off < "$tmp/run.out"
			a=$(echo "$p / ($rate * $s + $burst)" | bc -l)
			o=$(echo "$off / ($rate * $s)" | bc -l)
			printf '%s\t%s\t%s\t%s\t%.2f\t%.4f\t%.2f\t%.2f\t%.2f\n' "$r" "$ms" "$kind" "$p" "$s" \
				"$a" "$sw" "$nm" "$o" >> "$dat"
			say "  round $r, every $iv, $kind: offered $(printf %.2f "$o")x, $p passed in" \
				"$(printf %.2f "$s") s: $(printf %.3f "$a") x (r t + b); switch" \
				"$(printf %.2f "$sw") s (named $(printf %.2f "$nm") s)"
		done
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# min-max of column C (6 accuracy, 7 switch, 8 named, 9 offered) for interval MS and
# KIND ("*": all) over the rounds.
span() {
	awk -v ms="$1" -v k="$2" -v c="$3" -v f="$4" '
		$2 == ms && ($3 == k || k == "*") { v = $c + 0; if (!n++ || v < lo) lo = v; if (n == 1 || v > hi) hi = v }
		END { if (!n) print "-"; else if (sprintf(f, lo) == sprintf(f, hi)) printf f "\n", lo;
		      else printf f "-" f "\n", lo, hi }' "$dat"
}

{
	echo "# Fleet sync through Redis Sentinel: accuracy across a failover"
	echo
	echo "Measured by bench/sync_sentinel.sh on $(date -u +%Y-%m-%d) ($( [ "$quick" = 1 ] && echo quick || echo full) run):"
	echo "kernel $(uname -r), $(nproc) CPUs, redis-server $(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p'),"
	echo "load average before $load0, after $load1."
	echo
	echo "3 limiters (token-bucket $rate/s, burst $burst), each with its agent, through"
	echo "sentinel:// (a master, its replica, 3 sentinels, down-after-milliseconds 1000); one"
	echo "source at several times its limit (trafgen paced at 6x) for $secs s, spread evenly."
	echo "Steady: nothing fails; share,"
	echo "local: the master SIGKILLed after $kill_at s, the agents in that fallback until they"
	echo "write to the new master. Accuracy: total passed / (r t + b); switch: from the kill"
	echo "until the last agent's first round trip on the new master (its time as the new"
	echo "master recorded it, read every 20 ms: within a turn of it); in brackets, when the"
	echo "sentinels named the new master (the leader's log). Min-max over $rounds round(s), kinds"
	echo "and intervals interleaved in each round."
	echo
	echo "| interval | offered | steady | failover, share | switch (named) | failover, local | switch (named) |"
	echo "|---|---|---|---|---|---|---|"
	for iv in $intervals; do
		ms=$(case $iv in *ms) echo "${iv%ms}" ;; *s) echo "$((${iv%s} * 1000))" ;; esac)
		printf '| %s | %sx | %s | %s | %s s (%s s) | %s | %s s (%s s) |\n' "$iv" \
			"$(span "$ms" '*' 9 %.1f)" \
			"$(span "$ms" steady 6 %.3f)" "$(span "$ms" share 6 %.3f)" \
			"$(span "$ms" share 7 %.2f)" "$(span "$ms" share 8 %.2f)" \
			"$(span "$ms" local 6 %.3f)" "$(span "$ms" local 7 %.2f)" \
			"$(span "$ms" local 8 %.2f)"
	done
} > "$tmp/sync-sentinel.md"

cat "$tmp/sync-sentinel.md"
if [ "$quick" != 1 ]; then
	mkdir -p "$here/results"
	cp "$tmp/sync-sentinel.md" "$here/results/sync-sentinel.md"
	cp "$dat" "$here/results/sync-sentinel.dat"
	gnuplot -e "dat='$here/results/sync-sentinel.dat'; out='$here/results/sync-sentinel.png'" \
		"$here/sync_sentinel.gp"
	say "results in bench/results/sync-sentinel.md, sync-sentinel.png"
fi
