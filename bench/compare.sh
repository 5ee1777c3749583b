#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Part 1's matrix (or another phase of rl-bench micro) for two builds, side
# by side in one run:
#	bench/compare.sh BASE_BUILD NEW_BUILD [RUNS] [ROUNDS] [REPS]   (as root)
#	RL_COMPARE_PHASE=paths bench/compare.sh ...   the paths of issue #30
#	  (phase_paths() of micro.c): every row's x (c'), x the program without
#	  rules (gross) and x our table for 1M, base and new
# Each BUILD is a build directory holding rl-bench (make BUILD=DIR DIR/rl-bench
# in the tree to measure, e.g. a git worktree of the base commit). The runs
# alternate base, new, base, new... (RUNS of each, default 3), each an
# independent process in the same idle namespace, so that a drift of the
# shared machine reaches both alike. Out: per program and source count, each
# build's x (c') (median over its runs, min-max over its runs), the change in
# medians, and whether it is within the noise: the larger of the two builds'
# run-to-run spreads. Prints markdown; keeps the raw matrices in
# bench/results/compare-raw/.
#
# Network safety: one veth pair inside a namespace made here and removed on
# exit; nothing is sent (BPF_PROG_TEST_RUN frames only, as part 1).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 BASE_BUILD NEW_BUILD [RUNS] [ROUNDS] [REPS]" >&2; exit 2; }
base=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
runs=${3:-3} rounds=${4:-9} reps=${5:-300000}
phase=${RL_COMPARE_PHASE:-matrix}
case $phase in matrix | paths) ;; *) echo "compare: no phase '$phase' (matrix, paths)" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "compare: must run as root" >&2; exit 1; }
for b in "$base" "$new"; do
	[ -x "$b/rl-bench" ] || { echo "compare: $b/rl-bench is missing" >&2; exit 1; }
done

id=$(($$ % 100000))
ns=rlc-$id
tmp=$(mktemp -d /tmp/rl-compare.XXXXXX)
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
ip -n "$ns" link add rca$id type veth peer name rcb$id
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$ns" link set rca$id up
ip -n "$ns" link set rcb$id up

for r in $(seq 1 "$runs"); do
	for side in base new; do
		b=$base
		[ $side = new ] && b=$new
		echo "compare: run $r of $runs, $side ($b)" >&2
		ip netns exec "$ns" timeout 1200 "$b/rl-bench" --ifname rca$id micro --only "$phase" \
			--out "$tmp/$side$r" --rounds "$rounds" --reps "$reps" >/dev/null
		# A build without the phase runs nothing and says nothing: say it here.
		[ -s "$tmp/$side$r/$phase.tsv" ] ||
			{ echo "compare: $b/rl-bench wrote no $phase.tsv (no such phase?)" >&2; exit 1; }
	done
done

mkdir -p "$here/results/compare-raw"
for f in "$tmp"/*/"$phase".tsv; do
	cp "$f" "$here/results/compare-raw/$phase-$(basename "$(dirname "$f")").tsv"
done

if [ "$phase" = paths ]; then
	# program, sources -> each figure of each run of each side: median (min-max).
	awk -F'\t' '
		/^#/ { next }
		{
			split(FILENAME, p, "/")
			side = p[length(p) - 1]
			sub(/[0-9]+$/, "", side)
			k = $1 SUBSEP $2
			if (!(k in seen)) { seen[k] = 1; order[++n] = k }
			c = ++cnt[k, side]
			v[k, side, 4, c] = $4; v[k, side, 6, c] = $6; v[k, side, 7, c] = $7
		}
		function cell(k, s, col,   i, m, a, t, j, md) {
			m = cnt[k, s]
			if (!m || v[k, s, col, 1] == 0) return ""
			for (i = 1; i <= m; i++) a[i] = v[k, s, col, i]
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			md = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
			return sprintf("%.2f (%.2f-%.2f)", md, a[1], a[m])
		}
		END {
			print "| program | sources | x (c\x27), base | x (c\x27), new | x no rules (gross), base | new | x our table for 1M, base | new |"
			print "|---|---|---|---|---|---|---|---|"
			for (i = 1; i <= n; i++) {
				k = order[i]
				split(k, kk, SUBSEP)
				printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", kk[1], kk[2],
					cell(k, "base", 4), cell(k, "new", 4), cell(k, "base", 6),
					cell(k, "new", 6), cell(k, "base", 7), cell(k, "new", 7)
			}
		}' "$tmp"/base*/paths.tsv "$tmp"/new*/paths.tsv
	exit 0
fi

# program, sources -> x (c') of each run of each side.
awk -F'\t' -v runs="$runs" '
	/^#/ { next }
	{
		split(FILENAME, p, "/")
		side = p[length(p) - 1]
		sub(/[0-9]+$/, "", side)
		k = $1 SUBSEP $2
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		v[k, side, ++cnt[k, side]] = $5
	}
	function med(k, s,   i, m, a, t, j) {
		m = cnt[k, s]
		for (i = 1; i <= m; i++) a[i] = v[k, s, i]
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		lo = a[1]; hi = a[m]
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		print "| program | sources | base x (c\x27): median (min-max) | new x (c\x27): median (min-max) | new - base | noise (larger spread) | verdict |"
		print "|---|---|---|---|---|---|---|"
		for (i = 1; i <= n; i++) {
			k = order[i]
			split(k, kk, SUBSEP)
			if (kk[1] !~ /^xdp-ratelimit/) continue
			if (!cnt[k, "base"] || !cnt[k, "new"]) continue
			mb = med(k, "base"); bl = lo; bh = hi
			mn = med(k, "new"); nl = lo; nh = hi
			noise = bh - bl > nh - nl ? bh - bl : nh - nl
			d = mn - mb
			verdict = d <= noise ? "within noise" : "**worse**"
			if (d < -noise) verdict = "better"
			printf "| %s | %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %+.2f | %.2f | %s |\n",
				kk[1], kk[2], mb, bl, bh, mn, nl, nh, d, noise, verdict
		}
	}' "$tmp"/base*/matrix.tsv "$tmp"/new*/matrix.tsv
