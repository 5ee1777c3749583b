#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Part 2 of make bench: end to end over veth, alone or from run.sh.
#	bench/e2e.sh BUILD [BASE_BUILD]		(as root)
# The receive CPU per packet and the rate of the receiving veth's NAPI thread
# with each limiter on it: xdp-ratelimit (BUILD), the nftables netdev meter,
# iptables hashlimit, a bare XDP drop and, with BASE_BUILD, xdp-ratelimit of
# that build too (a before and after in one run). Three senders: trafgen (a
# packet socket: its frames reach the veth as skbs) and rl-bench gen (XDP
# frames: as from a driver) at 200 kpps and at full speed; one source or
# 65536 random ones. Prints the markdown table; writes e2e-raw.tsv, e2e.dat
# and e2e.png in bench/results/ (or $RL_BENCH_RESULTS). RL_BENCH_QUICK=1: one
# short run of each.
#
# Network safety: traffic only between two namespaces made here (veth pair,
# 198.18.0.0/15), bounded in count and time; everything removed on exit.
set -euo pipefail

build=${1:-build}
base=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
case $build in /*) ;; *) build=$top/$build ;; esac
[ -z "$base" ] || base=$(cd "$base" && pwd)
# Where the raw numbers and the plot go (run.sh: bench/results).
res=${RL_BENCH_RESULTS:-$here/results}
quick=${RL_BENCH_QUICK:-0}

die() { echo "bench: $*" >&2; exit 1; }
say() { echo "bench: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root (BPF, namespaces, XDP)"
# What this part needs beyond make deps (run.sh installs the same).
need=""
for p in nftables iptables ethtool gnuplot-nox util-linux; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need="$need $p"
done
if [ -n "$need" ]; then
	say "installing:$need"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi
for t in trafgen nft iptables ethtool gnuplot nsenter taskset chrt ip; do
	command -v "$t" >/dev/null || die "$t is missing"
done
bench=$build/rl-bench
cli=$build/xdp-ratelimit
[ -x "$bench" ] && [ -x "$cli" ] && [ -e "$build/bench/bench_drop.bpf.o" ] ||
	die "$build needs xdp-ratelimit, rl-bench and bench/bench_drop.bpf.o (make bench builds them)"
[ -z "$base" ] || [ -x "$base/xdp-ratelimit" ] || die "$base/xdp-ratelimit is missing"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited 2>/dev/null || true

# Interface names stay short so that the NAPI thread's name (napi/IFACE-ID,
# 15 characters) still shows the whole interface name.
id=$(($$ % 100000))
ns_tx=rlb-tx-$id
ns_rx=rlb-rx-$id
if_tx=rbt$id if_rx=rbr$id	# the measured pair: ns_tx -> ns_rx
if_ga=rbg$id if_gb=rbh$id	# an idle pair in ns_tx for the generator
tmp=$(mktemp -d /tmp/rl-e2e.XXXXXX)
pids=""

cleanup() {
	set +e
	for p in $pids; do
		kill -INT "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	if [ -e "/run/netns/$ns_rx" ]; then
		nsenter --net="/run/netns/$ns_rx" "$cli" detach "$if_rx" >/dev/null 2>&1
	fi
	for n in "$ns_tx" "$ns_rx"; do
		[ -e "/run/netns/$n" ] && ip netns del "$n"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$quick" = 1 ]; then
	e2e_runs=1 warm_s=1 meas_s=1
else
	e2e_runs=5 warm_s=1.5 meas_s=2
fi
mkdir -p "$res"
say "part 2: end to end over veth (${e2e_runs} runs of every case)"
ip netns add "$ns_tx"
ip netns add "$ns_rx"
for n in "$ns_tx" "$ns_rx"; do
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
done
ip link add "$if_tx" netns "$ns_tx" type veth peer name "$if_rx" netns "$ns_rx"
ip -n "$ns_tx" link set "$if_tx" address 02:00:00:00:00:01
ip -n "$ns_rx" link set "$if_rx" address 02:00:00:00:00:02
ip -n "$ns_tx" addr add 198.18.0.1/15 dev "$if_tx"
ip -n "$ns_rx" addr add 198.18.0.2/15 dev "$if_rx"
# The receiver: GRO on gives the veth its NAPI instance, so every frame is
# received in one place: the NAPI poll, run as a thread (threaded NAPI) that
# we pin to CPU 1 while the sender runs on CPU 0. TSO/GSO off on the sender
# so that the veth hands packet-socket frames to that NAPI too.
ip netns exec "$ns_rx" ethtool -K "$if_rx" gro on >/dev/null
ip netns exec "$ns_tx" ethtool -K "$if_tx" tso off gso off >/dev/null
ip -n "$ns_tx" link set "$if_tx" up
ip -n "$ns_rx" link set "$if_rx" up
ip netns exec "$ns_rx" sh -c "echo 1 > /sys/class/net/$if_rx/threaded"
# Packets that pass go up to UDP port 9, where nothing listens: no ICMP reply.
ip netns exec "$ns_rx" sysctl -qw net.ipv4.icmp_msgs_per_sec=0 net.ipv4.icmp_msgs_burst=0
ip netns exec "$ns_rx" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf."$if_rx".rp_filter=0
ip -n "$ns_tx" link add "$if_ga" type veth peer name "$if_gb"
ip -n "$ns_tx" link set "$if_ga" up
ip -n "$ns_tx" link set "$if_gb" up

# trafgen packets: 60-byte IPv4/UDP to 198.18.0.2:9, from 198.18.0.1 or from
# 198.18.R.R (two random bytes: 65536 sources, all in 198.18.0.0/16).
cat > "$tmp/one.cfg" <<'EOF'
{
  0x02, 0x00, 0x00, 0x00, 0x00, 0x02,  0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  c16(0x0800),
  0x45, 0x00, c16(46), c16(0), c16(0), 64, 17, csumip(14, 33),
  198, 18, 0, 1,  198, 18, 0, 2,
  c16(1024), c16(9), c16(26), c16(0),
  fill(0x00, 18),
}
EOF
sed 's/198, 18, 0, 1,/198, 18, drnd(), drnd(),/' "$tmp/one.cfg" > "$tmp/random.cfg"

# The per-source limit of all three limiters: 1 packet per minute, burst 1.
# Sources: 1 (at the offered rate) or 65536 (about 1.5-3 packets/s each):
# both far over it, so nearly every packet is dropped by the limiter.
# The same table capacity in all three: 262144 sources (nft set size,
# hashlimit htable-max, our --max-sources).
setup() {
	case $1 in
	ours|base)
		local x=$cli
		[ "$1" = base ] && x=$base/xdp-ratelimit
		nsenter --net="/run/netns/$ns_rx" "$x" attach "$if_rx" --rate 0.016666667 \
			--burst 1 --max-sources 262144 --mode native >/dev/null ;;
	nft)
		ip netns exec "$ns_rx" nft -f - <<EOF
table netdev rlbench {
	set srcs { type ipv4_addr; size 262144; flags dynamic; }
	chain ingress {
		type filter hook ingress device "$if_rx" priority -500; policy accept;
		update @srcs { ip saddr limit rate over 1/minute burst 1 packets } drop
	}
}
EOF
		;;
	ipt)
		ip netns exec "$ns_rx" iptables -t raw -A PREROUTING -i "$if_rx" -m hashlimit \
			--hashlimit-mode srcip --hashlimit-above 1/min --hashlimit-burst 1 \
			--hashlimit-name "rlb$id" --hashlimit-htable-size 65536 \
			--hashlimit-htable-max 262144 --hashlimit-htable-expire 120000 -j DROP ;;
	xdpdrop)
		ip -n "$ns_rx" link set dev "$if_rx" xdpdrv obj "$build/bench/bench_drop.bpf.o" sec xdp ;;
	esac
}

teardown() {
	case $1 in
	ours) nsenter --net="/run/netns/$ns_rx" "$cli" detach "$if_rx" >/dev/null ;;
	base) nsenter --net="/run/netns/$ns_rx" "$base/xdp-ratelimit" detach "$if_rx" >/dev/null ;;
	nft) ip netns exec "$ns_rx" nft delete table netdev rlbench ;;
	ipt) ip netns exec "$ns_rx" iptables -t raw -F PREROUTING ;;
	xdpdrop) ip -n "$ns_rx" link set dev "$if_rx" xdpdrv off ;;
	esac
}

napi_pid() {
	ps -e -o pid=,comm= | awk -v n="napi/$if_rx" 'index($2, n) == 1 { print $1; exit }'
}
rx_packets() { ip netns exec "$ns_rx" cat "/sys/class/net/$if_rx/statistics/rx_packets"; }
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }

# measure SENDER PATTERN: sets result to "rx_pps ns_per_packet", or to "" if the
# sender stopped early.
measure() {
	local sender=$1 pattern=$2 napi pid r0 r1 c0 c1 t0 t1 rnd="" limit
	result=""
	napi=$(napi_pid)
	[ -n "$napi" ] || { say "no NAPI thread for $if_rx"; return 0; }
	# Receiver on CPU 1 at a real-time priority, like softirq work over tasks:
	# other tasks on this shared machine then cannot hold it off its ring.
	taskset -pc 1 "$napi" >/dev/null
	chrt -f -p 10 "$napi" 2>/dev/null || true
	limit=$(awk -v w="$warm_s" -v m="$meas_s" 'BEGIN { printf "%d", w + m + 2 }')
	case $sender in
	trafgen)
		ip netns exec "$ns_tx" taskset -c 0 timeout "$limit" trafgen -o "$if_tx" \
			-i "$tmp/$pattern.cfg" -P 1 -Q -C -E 7 -n $((limit * 200000)) -t 5us \
			>>"$tmp/trafgen.log" 2>&1 &
		pid=$! ;;
	gen|genmax)
		[ "$pattern" = random ] && rnd=--random
		ip netns exec "$ns_tx" "$bench" --ifname "$if_ga" gen --to "$if_tx" --cpu 0 \
			--pps "$([ "$sender" = gen ] && echo 200000 || echo 0)" \
			--seconds "$limit" $rnd 2>>"$tmp/gen.log" &
		pid=$! ;;
	esac
	pids="$pids $pid"
	sleep "$warm_s"
	r0=$(rx_packets) c0=$(cpu_ns "$napi") t0=$(date +%s%N)
	sleep "$meas_s"
	r1=$(rx_packets) c1=$(cpu_ns "$napi") t1=$(date +%s%N)
	if kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		if [ "$r1" -gt "$r0" ]; then
			result=$(awk -v r=$((r1 - r0)) -v c=$((c1 - c0)) -v t=$((t1 - t0)) \
				'BEGIN { printf "%.0f %.1f\n", r * 1e9 / t, c / r }')
		fi
	else
		wait "$pid" 2>/dev/null || true
		say "$sender stopped early (see trafgen's 'Flushing TX_RING failed'); run dropped"
	fi
	pids=${pids% $pid}
}

configs="ours nft ipt xdpdrop"
[ -z "$base" ] || configs="ours nft base ipt xdpdrop"
: > "$tmp/e2e.tsv"
for run in $(seq 1 "$e2e_runs"); do
	for c in $configs; do
		setup "$c"
		for s in trafgen gen genmax; do
			for p in one random; do
				for try in 1 2; do
					measure "$s" "$p"
					[ -n "$result" ] && break
				done
				if [ -n "$result" ]; then
					read -r o_pps o_cpu <<<"$result"
					printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$p" "$c" "$run" \
						"$o_pps" "$o_cpu" >> "$tmp/e2e.tsv"
				fi
				say "e2e run $run: $c, $s, $p: ${result:-failed} (rx pps, CPU ns/pkt)"
			done
		done
		teardown "$c"
	done
	configs="$(echo "$configs" | awk '{ s = $2; for (i = 3; i <= NF; i++) s = s " " $i; print s, $1 }')"
done
cp "$tmp/e2e.tsv" "$res/e2e-raw.tsv"

# Summary: min / median / max per case; ours against each netfilter limiter.
awk -F'\t' '
function med(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	mn = a[1]; mx = a[n]
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 SUBSEP $2 SUBSEP $3; pps[k] = pps[k] " " $5; cpu[k] = cpu[k] " " $6 }
END {
	split("trafgen gen genmax", S, " "); split("one random", P, " ")
	nc = split("ours nft ipt xdpdrop base", C, " ")
	name["ours"] = "xdp-ratelimit (native XDP)"; name["nft"] = "nftables netdev ingress meter"
	name["ipt"] = "iptables raw hashlimit"; name["xdpdrop"] = "bare XDP drop"
	name["base"] = "xdp-ratelimit, base build"
	sn["trafgen"] = "trafgen -t 5us (packet socket)"; sn["gen"] = "XDP frames, 200 kpps"
	sn["genmax"] = "XDP frames, full speed"
	print "| traffic | sources | receiver | rx kpps min / med / max | CPU ns/pkt min / med / max | netfilter / ours (CPU) |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= 3; i++) for (j = 1; j <= 2; j++) {
		ko = S[i] SUBSEP P[j] SUBSEP "ours"
		if (!(ko in cpu)) continue
		ours = med(cpu[ko])
		for (c = 1; c <= nc; c++) {
			k = S[i] SUBSEP P[j] SUBSEP C[c]
			if (!(k in cpu)) continue
			pm = med(pps[k]); pmn = mn; pmx = mx
			cm = med(cpu[k]); cmn = mn; cmx = mx
			ratio = ""
			if (C[c] == "nft" || C[c] == "ipt") {
				r = cm / ours
				goal = P[j] == "random" ? 2 : 1
				ratio = sprintf("%.2fx %s", r, r >= goal ? "ok" : "**below goal " goal "x**")
			} else if (C[c] == "base") {
				ratio = sprintf("base / ours %.2fx", cm / ours)
			}
			printf "| %s | %s | %s | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f | %s |\n",
				sn[S[i]], P[j] == "one" ? "1" : "65536 random", name[C[c]],
				pmn / 1000, pm / 1000, pmx / 1000, cmn, cm, cmx, ratio
		}
		line = S[i] "/" (P[j] == "one" ? "1src" : "random")
		for (c = 1; c <= 4; c++) {
			k = S[i] SUBSEP P[j] SUBSEP C[c]
			line = line " " ((k in cpu) ? med(cpu[k]) : "NaN")
		}
		print line > "/dev/stderr"
	}
}' "$tmp/e2e.tsv" 2> "$res/e2e.dat"
gnuplot -e "dat='$res/e2e.dat'; out='$res/e2e.png'" "$here/e2e.gp" 2>/dev/null ||
	say "e2e plot failed"

