#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Fleet sync in the kernel (issue #27), one build or two side by side in one
# run:
#	bench/sync_ratio.sh BASE_BUILD|- NEW_BUILD [RUNS] [ROUNDS] [REPS]   (as root)
# 1. Counting's per-packet cost: the ratio of the program with sync counting
#    on to the same program with it off, at 1 and 64k sources (rl-bench micro
#    --only sync, part 1's method: BPF_PROG_TEST_RUN, interleaved rounds, the
#    ratio taken within each process, on each of three instances' own maps).
# 2. The drain and the charge of one interval with 1,024, 16,384 and 131,072
#    sources that each passed a packet (rl-bench sync-kernel; sync-cost
#    --kernel in builds from before it had its own file).
# Each BUILD is a build directory holding rl-bench (make BUILD=DIR DIR/rl-bench
# in the tree to measure, e.g. `git archive BASE | tar -x` of the base
# commit); "-" for BASE_BUILD measures NEW_BUILD alone. The runs alternate
# base, new, base, new... (RUNS of each, default 3), each an independent
# process in the same idle namespace, so that a drift of the shared machine
# reaches both alike. Prints markdown: per build and source count, the on/off
# ratio's median over the runs and its min-max, the net ns per packet off and
# on (medians); the drain and charge times (medians over the runs of each
# run's median, and the largest); the load average before and after.
#
# Network safety: one veth pair inside a namespace made here and removed on
# exit; nothing is sent (BPF_PROG_TEST_RUN frames only, as part 1).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 BASE_BUILD|- NEW_BUILD [RUNS] [ROUNDS] [REPS]" >&2; exit 2; }
base=$1
[ "$base" = - ] || base=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
runs=${3:-3} rounds=${4:-9} reps=${5:-300000}
[ "$(id -u)" = 0 ] || { echo "sync_ratio: must run as root" >&2; exit 1; }
sides="new"
[ "$base" = - ] || sides="base new"
for b in $([ "$base" = - ] || echo "$base") "$new"; do
	[ -x "$b/rl-bench" ] || { echo "sync_ratio: $b/rl-bench is missing" >&2; exit 1; }
done

id=$(($$ % 100000))
ns=rlsr-$id
tmp=$(mktemp -d /tmp/rl-sync-ratio.XXXXXX)
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
ip -n "$ns" link add rsa$id type veth peer name rsb$id
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$ns" link set rsa$id up
ip -n "$ns" link set rsb$id up

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$runs"); do
	for side in $sides; do
		b=$new
		[ $side = base ] && b=$base
		echo "sync_ratio: run $r of $runs, $side ($b)" >&2
		ip netns exec "$ns" timeout 1200 "$b/rl-bench" --ifname rsa$id micro --only sync \
			--out "$tmp/$side$r" --rounds "$rounds" --reps "$reps" >/dev/null
		case $("$b/rl-bench" 2>&1 || true) in
		*sync-kernel*) kcmd="sync-kernel" ;;
		*) kcmd="sync-cost --kernel" ;;
		esac
		for n in 1024 16384 131072; do
			# shellcheck disable=SC2086 # $kcmd is two words in older builds
			ip netns exec "$ns" timeout 600 "$b/rl-bench" --ifname rsa$id $kcmd \
				--sources $n --rounds 9 >> "$tmp/$side-drain.tsv"
		done
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Medians over the runs (min-max beside the ratio). $1: files; the awk sees side and key.
med_awk='
	function med(a, k, m,   i, j, t, v) {
		for (i = 1; i <= m; i++) v[i] = a[k, i]
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		lo = v[1]; hi = v[m]
		return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	function name(side) { return side == "base" ? "before (" base ")" : "after (" new ")" }'

echo "Sync counting on / off and the kernel side of a drain, $runs runs of each build"
echo "alternating, $rounds rounds of $reps repetitions each; load average before:"
echo "$load_before, after: $load_after."
echo
echo "| build | sources | on / off: median (min-max) over runs | off, net ns | on, net ns |"
echo "|---|---|---|---|---|"
# sync.dat: sources, off_net_ns, on_net_ns, on_x_off[, instances' lo, hi]
files=""
for side in $sides; do
	for r in $(seq 1 "$runs"); do files="$files $tmp/$side$r/sync.dat"; done
done
# shellcheck disable=SC2086
awk -v base="$base" -v new="$new" "$med_awk"'
	/^#/ { next }
	{
		split(FILENAME, p, "/")
		side = p[length(p) - 1]
		sub(/[0-9]+$/, "", side)
		k = side SUBSEP $1
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		c = ++cnt[k]
		r[k, c] = $4; off[k, c] = $2; on[k, c] = $3
	}
	END {
		for (i = 1; i <= n; i++) {
			k = order[i]
			split(k, kk, SUBSEP)
			m = cnt[k]
			mo = med(off, k, m); mn = med(on, k, m)
			mr = med(r, k, m)
			printf "| %s | %s | %.3f (%.3f-%.3f) | %.2f | %.2f |\n",
				name(kk[1]), kk[2], mr, lo, hi, mo, mn
		}
	}' $files
echo
echo "| build | sources | drained | drain, ms: median (largest) | charge, ms: median (largest) |"
echo "|---|---|---|---|---|"
# sync-kernel: sources rounds drained drain_med drain_max charge_med charge_max
for side in $sides; do
	awk -v side="$side" -v base="$base" -v new="$new" "$med_awk"'
		{
			k = side SUBSEP $1
			if (!(k in seen)) { seen[k] = 1; order[++n] = k }
			c = ++cnt[k]
			d[k, c] = $4; ch[k, c] = $6; got[k] = $3
			if ($5 > dmax[k]) dmax[k] = $5
			if ($7 > cmax[k]) cmax[k] = $7
		}
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]
				split(k, kk, SUBSEP)
				printf "| %s | %s | %s | %.1f (%.1f) | %.1f (%.1f) |\n", name(side), kk[2],
					got[k], med(d, k, cnt[k]), dmax[k], med(ch, k, cnt[k]), cmax[k]
			}
		}' "$tmp/$side-drain.tsv"
done
