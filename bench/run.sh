#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make bench: every benchmark of the project in one run, side by side.
#	bench/run.sh [BUILD]		(as root; BUILD defaults to build)
# RL_BENCH_QUICK=1 makes every part short (a smoke test of this script).
#
# Parts (see bench/README.md for what each measures and why it is fair):
#   1. per-packet cost with BPF_PROG_TEST_RUN, against reference programs;
#      1c: the SYN-cookie path against the per-source path;
#      1d: IPv6, IPv4 behind rules, tables larger than their sources (issue #30);
#   2. end to end over veth: receive CPU per packet and sustained rate, against
#      nftables and iptables limiters and a bare XDP drop;
#   3. accuracy: one source at 10x its limit from 2 CPUs; three traces through
#      simulate for the four algorithms, plotted;
#   4. a table after 5 sets against a fresh one; memory per source at 1M and 8M
#      sources; cost against the number of sources;
#   5. the per-packet cost of drop samples at 1 in 100 against none;
#   6. fleet sync (bench/sync.sh): accuracy against the interval for 2, 3, 5
#      nodes, Redis cost per node per interval, the kernel side (counting per
#      packet, drain, charge: bench/sync_ratio.sh) (bench/results/sync.md); the
#      same through Redis Sentinel, steady and across a failover
#      (bench/sync_sentinel.sh, bench/results/sync-sentinel.md);
#   7. what top shows while the kernel rewrites states under a slow walk
#      (bench/top_walk.sh, bench/results/top_walk.txt);
#   8. the levels above the source (rl-bench micro --only levels, with part 4):
#      each level's per-packet cost against the per-source limit alone;
#   9. what top costs with a million sources against an empty table, and
#      where attach's time goes (bench/top_scale.sh, bench/attach_cost.sh:
#      bench/results/top_scale.md, attach_cost.md).
# RL_BENCH_BASE=DIR, a build of another tree (e.g. the commit before a
# change): parts 2 and 9 measure it too, side by side in the same runs.
# Results: bench/results/results.md (printed at the end) and PNG plots.
#
# Network safety: everything runs inside network namespaces made here and
# removed on exit; the only addresses are in 198.18.0.0/15 (IPv4) and
# 2001:2::/48 (IPv6, test_run frames only), and 10.0.0.0/8 in test_run
# frames only (never sent: part 1's 1M and 8M IPv4 sources, more than
# 198.18.0.0/15 holds); every loop is bounded in count and in time.
set -euo pipefail

build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
# BUILD relative to the tree or absolute: from here on, absolute.
case $build in /*) ;; *) build=$top/$build ;; esac
res=$here/results
quick=${RL_BENCH_QUICK:-0}

die() { echo "bench: $*" >&2; exit 1; }
say() { echo "bench: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF, namespaces, XDP)"

# --- what the benchmarks need beyond make deps -------------------------------
need=""
for p in gnuplot-nox nftables iptables ethtool util-linux strace; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need="$need $p"
done
if [ -n "$need" ]; then
	say "installing:$need"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi
for t in trafgen nft iptables ethtool gnuplot nsenter taskset chrt ip strace; do
	command -v "$t" >/dev/null || die "$t is missing"
done

make --no-print-directory BUILD="$build" "$build/xdp-ratelimit" "$build/rl-bench" \
	"$build/bench/bench_drop.bpf.o" >&2
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited 2>/dev/null || true

bench=$build/rl-bench
cli=$build/xdp-ratelimit
[ -x "$bench" ] && [ -x "$cli" ] || die "build failed"

# --- names, cleanup -----------------------------------------------------------
# Interface names stay short so that the NAPI thread's name (napi/IFACE-ID,
# 15 characters) still shows the whole interface name.
id=$(($$ % 100000))
ns_h=rlb-h-$id		# holds an idle veth for test_run (see bench/bench.h)
if_ha=rba$id if_hb=rbb$id	# the idle pair in ns_h
tmp=$(mktemp -d /tmp/rl-bench.XXXXXX)
pids=""

cleanup() {
	set +e
	for p in $pids; do
		kill -INT "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	for n in "$ns_h"; do
		[ -e "/run/netns/$n" ] && ip netns del "$n"
	done
	# Pins of an attach whose interface is gone with its namespace: orphans.
	"$cli" cleanup >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$res"
# What this run writes, and nothing else: the set-associative study's results
# (setassoc.md, from rl-bench setassoc) and other hand-run files stay.
rm -f "$res"/*.png "$res"/results.md "$res"/rules.txt "$res"/paths.md "$res"/spread.md \
	"$res"/sampling.md "$res"/*.tsv \
	"$res"/*.dat

if [ "$quick" = 1 ]; then
	rounds=3 reps=200000 acc_s=2 e2e_runs=1 warm_s=1 meas_s=1 quickflag=--quick micro_runs=2
else
	rounds=15 reps=500000 acc_s=10 e2e_runs=5 warm_s=1.5 meas_s=2 quickflag= micro_runs=3
fi

machine() {
	local cpu virt
	cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	virt=$(systemd-detect-virt --vm 2>/dev/null || true)
	echo "- kernel $(uname -r), $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM${virt:+, virtualized ($virt)}"
	echo "- $(. /etc/os-release && echo "$PRETTY_NAME"), clang $(clang --version | awk 'NR==1 {print $NF}'), libbpf $(dpkg-query -W -f='${Version}' libbpf1 2>/dev/null)"
}
start_load=$(cut -d' ' -f1-3 /proc/loadavg)
t_start=$(date +%s)

# --- the idle veth that keeps test_run programs in the XDP dispatcher --------
ip netns add "$ns_h"
ip -n "$ns_h" link add "$if_ha" type veth peer name "$if_hb"
ip netns exec "$ns_h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$ns_h" link set "$if_ha" up
ip -n "$ns_h" link set "$if_hb" up

# === 1, 4 and 5: BPF_PROG_TEST_RUN ==========================================
# The matrix (part 1) runs $micro_runs times, each an independent process
# (new programs, new maps, their memory placed anew): the spread between runs
# is part of the result. Then the table after 5 sets, scale and memory, once.
say "part 1 + 4: per-packet cost, scale and memory (BPF_PROG_TEST_RUN)"
for run in $(seq 1 "$micro_runs"); do
	say "part 1: the matrix, run $run of $micro_runs"
	ip netns exec "$ns_h" timeout 900 "$bench" --ifname "$if_ha" micro --only matrix \
		--out "$tmp/micro$run" --rounds "$rounds" --reps "$reps" $quickflag
done
ip netns exec "$ns_h" timeout 900 "$bench" --ifname "$if_ha" micro \
	--only sets,scale,memory,sampling,sync,levels --out "$tmp/micro" --rounds "$rounds" --reps "$reps" \
	$quickflag
cp "$tmp/micro/sampling.md" "$res/sampling.md"
{
	printf '# run\t'
	head -n1 "$tmp/micro/micro-raw.tsv" | sed 's/^# //'
	for run in $(seq 1 "$micro_runs"); do
		grep -v '^#' "$tmp/micro$run/micro-raw.tsv" | sed "s/^/$run\t/"
	done
	grep -v '^#' "$tmp/micro/micro-raw.tsv" | sed 's/^/-\t/'
} > "$res/micro-raw.tsv"
cp "$tmp/micro/scale.dat" "$res/scale.dat"
cp "$tmp/micro/sync.dat" "$res/sync.dat"
cp "$tmp/micro/levels.dat" "$res/levels.dat"
gnuplot -e "dat='$res/scale.dat'; out='$res/scale.png'" "$here/scale.gp"
matrices=$(for run in $(seq 1 "$micro_runs"); do echo "$tmp/micro$run/matrix.tsv"; done)
for part in summary spread mul; do
	# shellcheck disable=SC2086
	awk -v part="$part" -f "$here/matrix.awk" $matrices > "$tmp/matrix-$part.md"
done

# === 1c: the SYN-cookie path =================================================
# SYN answered and ACK checked against the per-source path, ratios per round
# (bench/syncookie.c): bench/results/syncookie.md.
say "part 1c: the SYN-cookie path against the per-source path"
ip netns exec "$ns_h" timeout 300 "$bench" --ifname "$if_ha" syncookie --out "$tmp/syn" \
	--rounds "$rounds" --reps "$reps" $quickflag || die "rl-bench syncookie failed"
cp "$tmp/syn/syncookie.md" "$res/syncookie.md"
cp "$tmp/syn/syncookie-raw.tsv" "$res/syncookie-raw.tsv"

# === 1b: the cost of rules ===================================================
# A packet that falls through to the default rule, with the default rule only
# and behind 100,000 allow-list prefixes and 16 port rules (issue #12).
say "part 1b: the cost of rules in front of the default rule"
timeout 300 sh "$here/rules.sh" "$build" >"$res/rules.txt" || die "rules.sh failed"

# === 1d: the paths beside the IPv4 default (issue #30) =======================
# IPv6, IPv4 behind 1,000 or 100,000 prefixes and 16 port rules, 1M sources in
# tables for 1M to 9M, against (c') (rl-bench micro --only paths). With
# RL_BENCH_BASE=DIR, a build directory of the code before a change (make
# BUILD=DIR DIR/rl-bench in a tree of it), every row before and after: the two
# builds' processes interleaved, $micro_runs of each (bench/compare.sh).
say "part 1d: IPv6, rules, table sizes"
if [ -n "${RL_BENCH_BASE:-}" ]; then
	RL_COMPARE_PHASE=paths timeout 7200 "$here/compare.sh" "$RL_BENCH_BASE" "$build" \
		"$micro_runs" "$rounds" "$reps" >"$tmp/paths.md"
	paths_what="before (the build in $RL_BENCH_BASE) and after, $micro_runs interleaved processes of each: median (min-max) over them"
else
	ip netns exec "$ns_h" timeout 1800 "$bench" --ifname "$if_ha" micro --only paths \
		--out "$tmp/paths" --rounds "$rounds" --reps "$reps" $quickflag
	cp "$tmp/paths/paths.md" "$tmp/paths.md"
	paths_what="one process"
fi
cp "$tmp/paths.md" "$res/paths.md"
# Why a larger table costs more with the same sources: lines against pages (userspace).
say "part 4: the IPv4 table's access pattern, lines against pages (rl-bench spread)"
timeout 900 "$bench" spread --out "$tmp/spread" --rounds "$rounds" $quickflag
cp "$tmp/spread/spread.md" "$res/spread.md"

# === 3a: accuracy from 2 CPUs ================================================
say "part 3: accuracy, one source at 10x its limit from 2 CPUs, ${acc_s} s per case"
ip netns exec "$ns_h" timeout 300 "$bench" --ifname "$if_ha" accuracy --out "$tmp/acc" \
	--seconds "$acc_s" 2>&1 | grep -v '^$' >&2 || true
[ -s "$tmp/acc/accuracy.md" ] || die "accuracy produced nothing"

# === 3b: traces through simulate =============================================
say "part 3: traces through simulate"
tr=$tmp/traces
mkdir -p "$tr"
# Policy: 10 packets/s; burst 10 (token bucket, gcra); window 1 s, so L = 10.
# (a) Poisson arrivals at 8/s, under the limit, for 30 s (seeded: reproducible).
awk 'BEGIN { srand(7); t = 0; while (1) { t += -log(1 - rand()) / 8; if (t >= 30) break;
	printf "%.9f 198.18.0.1\n", t } }' > "$tr/steady.tr"
# (b) idle for 10 s, then 60 packets 1 ms apart, then 5/s (under the limit) for 5 s.
awk 'BEGIN { for (i = 0; i < 60; i++) printf "%.9f 198.18.0.1\n", 10 + i * 0.001;
	for (i = 1; i <= 25; i++) printf "%.9f 198.18.0.1\n", 10.06 + i * 0.2 }' > "$tr/burst.tr"
# (c) 2 s at 5/s, then 20 packets in the 100 ms before the window boundary at 5 s
#     and 20 in the 100 ms after it, then 5/s again until 8 s.
awk 'BEGIN { for (i = 0; i < 10; i++) printf "%.9f 198.18.0.1\n", 2 + i * 0.2;
	for (i = 0; i < 20; i++) printf "%.9f 198.18.0.1\n", 4.9 + i * 0.005;
	for (i = 0; i < 20; i++) printf "%.9f 198.18.0.1\n", 5.0 + i * 0.005;
	for (i = 1; i <= 14; i++) printf "%.9f 198.18.0.1\n", 5.2 + i * 0.2 }' > "$tr/boundary.tr"
{
	echo "| trace | packets | token-bucket passed / dropped | gcra | fixed-window | sliding-window |"
	echo "|---|---|---|---|---|---|"
	for t in steady burst boundary; do
		row="| $t | $(wc -l < "$tr/$t.tr") |"
		for a in token-bucket gcra fixed-window sliding-window; do
			case $a in
			token-bucket|gcra) pol="--rate 10 --burst 10" ;;
			*) pol="--rate 10 --window 1s" ;;
			esac
			# shellcheck disable=SC2086
			"$cli" simulate --algo "$a" $pol --trace "$tr/$t.tr" |
				awk '{ if ($3 == "allow") p++; else d++; print $1, p + 0, d + 0 }' \
				> "$tr/$t.$a.dat"
			row="$row $(tail -n1 "$tr/$t.$a.dat" | awk '{print $2 " / " $3}') |"
		done
		echo "$row"
	done
} > "$tmp/traces.md"
gnuplot -e "dir='$tr'; name='steady'; out='$res/trace-steady.png'; heading='Poisson at 8/s under a limit of 10/s (burst 10, window 1 s)'" "$here/trace.gp"
gnuplot -e "dir='$tr'; name='burst'; out='$res/trace-burst.png'; heading='10 s idle, then 60 packets in 60 ms, then 5/s (limit 10/s)'" "$here/trace.gp"
gnuplot -e "dir='$tr'; name='boundary'; out='$res/trace-boundary.png'; heading='20 packets in the 100 ms each side of the window boundary at 5 s (limit 10/s)'" "$here/trace.gp"

# === 2: end to end over veth =================================================
say "part 2: end to end over veth"
"$here/e2e.sh" "$build" ${RL_BENCH_BASE:+"$RL_BENCH_BASE"} >"$tmp/e2e.md" || die "e2e.sh failed"

# === the report ==============================================================
end_load=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(($(date +%s) - t_start))
{
	echo "# xdp-ratelimit benchmarks"
	echo
	echo "One run of \`make bench\` ($(date -u +%Y-%m-%dT%H:%MZ), ${elapsed} s$([ "$quick" = 1 ] && echo ', QUICK mode: short runs, not for conclusions')). Machine:"
	echo
	machine
	echo "- load average at start $start_load, at end $end_load (the machine is shared: compare ratios, not absolute times)"
	echo
	echo "## 1. Per-packet cost, BPF_PROG_TEST_RUN"
	echo
	echo "A driver program rewrites the IPv4 source address from a repetition counter and"
	echo "tail-calls the program under test: 1 source, or 1M sources (10.0.0.0/8, in test_run frames"
	echo "only, never sent: 198.18.0.0/15 holds 128k), taken in a scrambled order (the counter times"
	echo "an odd constant), not in the order the tables were filled in. ns per repetition from the"
	echo "driver's own clock samples; ${rounds} interleaved rounds of ${reps} repetitions, maps warm."
	echo "Every program that has a map runs as 3 instances, each with its own map (where a large map's"
	echo "memory lands moves its cost), with 1 source as 9 (6 more with small maps: where the code and"
	echo "the one entry land moves it too), and the whole matrix runs ${micro_runs} times as independent"
	echo "processes. *x (c')* = the ratio of net costs (driver subtracted) to (c')'s, taken within each"
	echo "round, then its median over rounds. (c') is the minimal GCRA program: parse, LRU lookup,"
	echo "precise clock, one compare-and-swap; its key is the 16-byte source (IPv4-mapped). (c'4) is"
	echo "(c') keyed by the 4-byte IPv4 address. Our policies pass every packet, so every packet"
	echo "takes the compare-and-swap, as in (c'). Goal (issue #11): x (c') <= 1.1."
	echo
	echo "Over the ${micro_runs} runs, min-max of x (c') (and of x (c'4)) over the runs and the policies of"
	echo "each group:"
	echo
	cat "$tmp/matrix-summary.md"
	echo
	echo "Each program, min-max over the ${micro_runs} runs:"
	echo
	cat "$tmp/matrix-spread.md"
	echo
	echo "Rates that are not a whole number of vt per ns (here 3 x 10^8/s and 3.333 x 10^9 B/s) take"
	echo "the 128-bit multiply of rl_vt() on every packet; exact ones (10^8/s, 10^10 B/s) one"
	echo "multiply. The windows never use it. Their cost, min-max over the runs:"
	echo
	cat "$tmp/matrix-mul.md"
	echo
	echo "The first run's table in full (*net*: median minus the driver, instances' range in"
	echo "brackets; *mins*: the ratio from the minimums; (c) = (c') plus an atomic add of a"
	echo "per-source packet counter, the reference of earlier runs):"
	echo
	cat "$tmp/micro1/micro.md"
	echo
	cat "$tmp"/micro*/notes.md
	echo
	echo "### The paths beside the IPv4 default (issue #30)"
	echo
	echo "One source: IPv6 (--prefix6 64 and 128) against (c') on the same IPv6 frame; IPv4 without"
	echo "rules and behind an allow list of 1,000 or 100,000 IPv4 /24s and 16 tcp port rules, a UDP"
	echo "and a TCP frame to a port no rule names (*x no rules*: the ratio to the same program"
	echo "without rules, gross: the driver's cost on both sides). 1M sources in rl_sets4 tables for"
	echo "--max-sources 1M to 9M (*x our table for 1M*), against (c') with a table for 1M. Measured"
	echo "as part 1, ${paths_what}:"
	echo
	cat "$res/paths.md"
	echo
	echo "## 2. End to end over veth"
	echo
	echo "Sender pinned to CPU 0 in one namespace; the receiving veth's NAPI runs as a thread"
	echo "(threaded NAPI) pinned to CPU 1 at SCHED_FIFO 10. *CPU ns/pkt* = that thread's CPU time"
	echo "(/proc/PID/schedstat) over the packets the veth received (rx_packets), over ${meas_s} s after"
	echo "${warm_s} s of warm-up; ${e2e_runs} runs of each case, cases interleaved. Per-source limit 1/minute,"
	echo "burst 1, in all three limiters: nearly all packets are over it. *netfilter / ours* is the"
	echo "netfilter limiter's median CPU per packet over ours; goal > 1x (1 source), >= 2x (random)."
	echo
	cat "$tmp/e2e.md"
	echo
	echo "![e2e](e2e.png)"
	echo
	echo "## 3. Accuracy"
	echo
	echo "One source at 10x its limit, from 2 CPUs at once (BPF_PROG_TEST_RUN in 2 threads, real"
	echo "clock, both waking every 100 us to send 10 frames), ${acc_s} s per case. r = 20000/s (pps) or"
	echo "14266660 B/s; b = 1000 packets (713333 B) for the buckets, L = r x 50 ms for the windows."
	echo "*model*: the same arrivals replayed sequentially through the shared core (include/rl_algo.h)"
	echo "in userspace: passed / model isolates what two CPUs at once changed; the sender's largest"
	echo "delay shows when the offered load itself fell short. The model spreads a batch's frames evenly over"
	echo "the time the batch took: when a sender was held off mid-batch for longer than b / r = 50 ms"
	echo "(see the last column), that is no longer so and the model is only approximate."
	echo
	cat "$tmp/acc/accuracy.md"
	echo
	echo "Traces through \`xdp-ratelimit simulate\` (rate 10/s; burst 10, or window 1 s so L = 10):"
	echo
	cat "$tmp/traces.md"
	echo
	echo "![steady](trace-steady.png) ![burst](trace-burst.png) ![boundary](trace-boundary.png)"
	echo
	echo "## 4. A table after 5 sets; memory and scale"
	echo
	echo "Three limiters each filled with the sources below, then taken through 5 \`set\`s the way the"
	echo "CLI does them (user/lib/xdp_attach.c rl_set_live(), with the driver's jump table in place of the"
	echo "interface): load a program for the next generation on the live maps, swap it in, send 1/16"
	echo "of the sources through it, rl_migrate(), swap in the program without the previous-generation"
	echo "lookup; the policy alternates between 100 and 200 Mpps and ends at the fresh tables' policy."
	echo "Against three freshly filled tables, same rounds. *entries*: rl_state4's entries after the"
	echo "sets (each source once: the number of sources); *under the live generation*: of those, the"
	echo "ones under the live program's generation. The fill-order rows send the sources in the"
	echo "order the tables were filled in, as the measurements up to 2026-12 did: a fresh LRU hash"
	echo "hands out its elements in about that order, so its lookups walk memory sequentially."
	echo
	cat "$tmp/micro/sets.md"
	echo
	echo "Memory: each table sized exactly N, filled by the program with N distinct sources"
	echo "(IPv4 frames for the IPv4 table, IPv6 /128 sources for rl_sets6); memlock is the kernel's"
	echo "accounting of the map (/proc/PID/fdinfo, what bpftool map show prints)."
	echo
	cat "$tmp/micro/memory.md"
	echo
	echo "Cost against the number of sources (token-bucket, packets; ns net of the driver; from"
	echo "1k sources on, 3 instances of each program with its own map, their range in brackets):"
	echo
	echo "| sources | xdp-ratelimit | (b) | (c') | xdp-ratelimit / (c') |"
	echo "|---|---|---|---|---|"
	awk '!/^#/ { printf "| %d | %.1f (%.0f-%.0f) | %.1f | %.1f (%.0f-%.0f) | %.2f |\n", $1, $2, $7, $8, $3, $4, $9, $10, $5 }' "$res/scale.dat"
	echo
	echo "![scale](scale.png)"
	echo
	echo "Why a larger table costs more with the same sources (\\`rl-bench spread\\`, bench/spread.c):"
	echo "the IPv4 table's access pattern in userspace, 1M sources hashed to the lines of a region"
	echo "as to the sets of rl_sets4, one compare-and-swap per packet, the cases interleaved. *the"
	echo "2^19 sets' lines, 16 apart*: the same lines as the table for 1M, spread over 512 MiB, as"
	echo "many pages as the table for 9M touches. The kernel maps BPF arrays with 4 KiB pages."
	echo
	cat "$res/spread.md"
	echo
	echo "## 5. Drop samples"
	echo
	echo "The per-packet cost of drop samples (\`events\`) at 1 in 100 against none, on frames the"
	echo "limiter drops (one source at 1 packet/s, burst 1), the same program and maps in each state,"
	echo "rounds interleaved with the driver alone, a reader draining the ring from the other CPU"
	echo "(BPF_PROG_TEST_RUN, ${rounds} rounds of ${reps})."
	echo
	cat "$res/sampling.md"
	echo
	echo "## 8. Levels above the source"
	echo
	echo "The per-packet cost of each level above the source (issue #28: a /24 aggregate, the"
	echo "interface's limit, both, the admission cap) against the per-source limit alone, the"
	echo "same token-bucket policy passing every packet at every level; then a packet of a new"
	echo "source the admission cap refuses, and one the table inserts (no cap), against the"
	echo "per-source limit alone on a source it holds. Ratios within each round, median and range"
	echo "over ${rounds} rounds of ${reps} (BPF_PROG_TEST_RUN, ns net of the driver):"
	echo
	echo "| sources | program | ns | x alone (median) | rounds |"
	echo "|---|---|---|---|---|"
	awk -F'\t' '!/^#/ { printf "| %d | %s | %.1f | %.3f | %.3f-%.3f |\n", $1, $2, $3, $4, $5, $6 }' "$res/levels.dat"
} > "$res/results.md"
cat "$res/results.md"

# === 6: fleet sync ===========================================================
# Its own namespaces, server and results file (bench/results/sync.md).
"$here/sync.sh" "$build"
"$here/sync_sentinel.sh" "$build"

# === 7: top under a slow walk ================================================
say "part 7: top's highest USED while 65,536 sources under their limit send"
timeout 300 "$here/top_walk.sh" 10 "$build" >"$res/top_walk.txt" || die "top_walk.sh failed"
cat "$res/top_walk.txt"

# === 8: top with a million sources; attach ==================================
say "part 9: top -n 20 with 1M sources against an empty table; attach's time"
if [ "$quick" = 1 ]; then top_rounds=3 top_sources=131072 att_rounds=3; else top_rounds=7 top_sources=1048576 att_rounds=11; fi
timeout 900 "$here/top_scale.sh" "$top_rounds" "$top_sources" ${RL_BENCH_BASE:+"$RL_BENCH_BASE"} \
	"$build" >"$res/top_scale.md" || die "top_scale.sh failed"
cat "$res/top_scale.md"
timeout 900 "$here/attach_cost.sh" "$att_rounds" ${RL_BENCH_BASE:+"$RL_BENCH_BASE"} "$build" \
	>"$res/attach_cost.md" || die "attach_cost.sh failed"
cat "$res/attach_cost.md"
