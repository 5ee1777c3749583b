#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Issue #11: the product with the set-associative IPv4 table (rl_sets4, what
# the policy gets) against the same product with the LRU table (rl_state4,
# forced with RL_BENCH_TABLE4=lru), everything else equal, at 1 and 1M sources.
#   bench/tools/sa_product.sh [TREE] [RUNS] [ROUNDS]   (as root)
# TREE (default .) must have run `make` and `make build/rl-bench`. Runs
# alternate between the two tables; the medians over rounds of each run are
# printed, with the ratio S/LRU.
set -e
tree=${1:-.} runs=${2:-3} rounds=${3:-7}
[ -d "$tree/build/bench" ] || { echo "usage: $0 [TREE] [RUNS] [ROUNDS]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$(dirname "$0")/sa_product.c
d=$tree
# Every object of rl-bench but main.o (its main() and phase table).
gcc -O2 -D_GNU_SOURCE -I"$d/include" -I"$d/user/lib" -I"$d/build" -I"$d/bench" \
	-I"$d/build/bench" "$src" $(ls "$d"/build/bench/*.o | grep -v '/main\.o$' | grep -v '\.bpf\.o$') \
	"$d/build/libxdp-ratelimit.a" -lxdp -lbpf -lelf -lz -lpthread -lm -o "$tmp/m"
for i in $(seq "$runs"); do
	RL_BENCH_TABLE4=lru "$tmp/m" "$rounds" 2>/dev/null | sed "s/^/base $i /" >>"$tmp/r"
	"$tmp/m" "$rounds" 2>/dev/null | sed "s/^/sa $i /" >>"$tmp/r"
done
awk '{ v[$1" "$2" "$4] = v[$1" "$2" "$4] " " $5 }
function med(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	for (k in v) { split(k, f, " "); if (f[1] == "base") {
		b = med(v[k]); s = med(v["sa " f[2] " " f[3]])
		printf "sources %8d run %s: LRU %7.1f ns  S %7.1f ns  S/LRU %.2f\n", f[3], f[2], b, s, s / b } }
}' "$tmp/r" | sort -k2,2n -k4,4
