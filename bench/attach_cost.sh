#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Where attach's time goes, for one or more builds side by side (issue #30):
#	bench/attach_cost.sh [ROUNDS] BUILD [BUILD...]	(as root)
# Each round attaches "--rate 100 --burst 10" to an idle veth in a namespace
# made here and detaches it, with each build in turn; the wall time of attach
# and its CPU time (user + system, the kernel's work in its system calls
# included: map creation, the verifier) are taken from outside. Then one attach per
# build under strace -T, its system calls summed by kind: the BPF object's
# maps (BPF_MAP_CREATE, the large ones named), the programs verified
# (BPF_PROG_LOAD, the named ones; the unnamed ones are libbpf's feature
# probes), BTF, map updates (an update of a map of maps waits for an RCU
# grace period), pins, the netlink requests (interface checks and the XDP
# attach), and the rest. Under strace each call costs more: read the kinds
# as shares, the wall times above as the figures. Prints markdown.
#
# Network safety: one veth pair inside a namespace made here and removed on
# exit; nothing is sent.
set -euo pipefail
rounds=9
case "${1:-}" in [0-9]*) rounds=$1; shift ;; esac
[ $# -ge 1 ] || { echo "usage: $0 [ROUNDS] BUILD [BUILD...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "attach_cost: must run as root" >&2; exit 1; }
command -v strace >/dev/null || { echo "attach_cost: strace is missing" >&2; exit 1; }
builds=()
for b in "$@"; do builds+=("$(cd "$b" && pwd)"); done
id=$(($$ % 100000))
ns=rlac-$id
tmp=$(mktemp -d /tmp/rl-attach-cost.XXXXXX)
cleanup() {
	set +e
	for b in "${builds[@]}"; do
		nsenter --net="/run/netns/$ns" "$b/xdp-ratelimit" detach ac0 >/dev/null 2>&1
	done
	[ -e "/run/netns/$ns" ] && ip netns del "$ns"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited 2>/dev/null || true
ip netns add "$ns"
ip -n "$ns" link add ac0 type veth peer name ac1
ip -n "$ns" link set ac0 up
ip -n "$ns" link set ac1 up
run() { nsenter --net="/run/netns/$ns" "$@"; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
TIMEFORMAT='%R %U %S'
: >"$tmp/times"
for r in $(seq "$rounds"); do
	for i in "${!builds[@]}"; do
		b=${builds[$i]}
		# Wall, user and system seconds of each command.
		{ time run "$b/xdp-ratelimit" attach ac0 --rate 100 --burst 10 >/dev/null; } 2>"$tmp/t"
		read -r w u s <"$tmp/t"
		echo "$i attach $w $u $s" >>"$tmp/times"
		{ time run "$b/xdp-ratelimit" detach ac0 >/dev/null; } 2>"$tmp/t"
		read -r w u s <"$tmp/t"
		echo "$i detach $w $u $s" >>"$tmp/times"
		# A process that only starts and stops: the floor of any command.
		{ time "$b/xdp-ratelimit" --version >/dev/null; } 2>"$tmp/t"
		read -r w u s <"$tmp/t"
		echo "$i version $w $u $s" >>"$tmp/times"
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
straces=3
for r in $(seq "$straces"); do
	for i in "${!builds[@]}"; do
		b=${builds[$i]}
		run strace -f -T -e trace=bpf,sendmsg,recvmsg,sendto,recvfrom -o "$tmp/st" \
			"$b/xdp-ratelimit" attach ac0 --rate 100 --burst 10 >/dev/null
		cat "$tmp/st" >>"$tmp/strace$i"
		run "$b/xdp-ratelimit" detach ac0 >/dev/null
	done
done
echo "attach IFACE --rate 100 --burst 10 on an idle veth, $rounds interleaved rounds (load average $load0 at start, $load1 at end)"
echo
echo "| build | attach wall, ms (median) | attach CPU (user + system), ms | detach wall | --version wall, CPU | attach CPU / first build's |"
echo "|---|---|---|---|---|---|"
awk -v names="$*" '
function med(s,   a, n, i, j, x) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ w[$1, $2] = w[$1, $2] " " $3 * 1000; c[$1, $2] = c[$1, $2] " " ($4 + $5) * 1000; if ($1 + 1 > nb) nb = $1 + 1 }
END {
	split(names, N, " ")
	for (i = 0; i < nb; i++) {
		a = med(c[i, "attach"]); if (i == 0) a0 = a
		printf "| %s | %.0f | %.0f | %.0f | %.0f, %.0f | %.2f |\n", N[i + 1], med(w[i, "attach"]), a, med(w[i, "detach"]), med(w[i, "version"]), med(c[i, "version"]), a0 ? a / a0 : 0
	}
}' "$tmp/times"
echo
echo "An attach under strace -T, system call time by kind, ms per attach (mean of $straces, calls per attach):"
echo
hdr="| kind |" sep="|---|"
for b in "$@"; do hdr="$hdr $b |"; sep="$sep---|"; done
echo "$hdr"
echo "$sep"
for i in "${!builds[@]}"; do
	awk -v n="$straces" '
	{
		d = $NF; gsub(/[<>]/, "", d); d *= 1000
		if ($0 ~ /bpf\(BPF_MAP_CREATE/) {
			match($0, /map_name="[^"]*"/); nm = substr($0, RSTART + 10, RLENGTH - 11)
			k = nm ~ /^(rl_sets4|rl_sets6|rl_sync4\.inner|rl_sync6\.inner|rl_events|\.data\.hot)$/ ? "map create: " nm : "map create: the others"
		} else if ($0 ~ /bpf\(BPF_PROG_LOAD/) {
			match($0, /prog_name="[^"]*"/); nm = substr($0, RSTART + 11, RLENGTH - 12)
			k = nm == "" ? "program load: libbpf feature probes" : "program load (verifier): " nm
		} else if ($0 ~ /bpf\(BPF_BTF_LOAD/) k = "BTF load"
		else if ($0 ~ /bpf\(BPF_MAP_UPDATE_ELEM/) k = "map updates (a map of maps: an RCU grace period)"
		else if ($0 ~ /bpf\(BPF_OBJ_PIN/) k = "pin"
		else if ($0 ~ /bpf\(/) k = "other bpf() calls"
		else if ($0 ~ /(send|recv)(msg|from)\(/) k = "netlink and sockets"
		else next
		s[k] += d; c[k]++; tot += d
	}
	END { for (k in s) printf "%s\t%.1f (%.0f)\n", k, s[k] / n, c[k] / n; printf "~total\t%.1f\n", tot / n }' "$tmp/strace$i" >"$tmp/kinds$i"
done
cut -f1 "$tmp"/kinds* | sort -u >"$tmp/allkinds"
while IFS= read -r k; do
	row="| ${k#\~} |"
	for i in "${!builds[@]}"; do
		v=$(awk -F'\t' -v k="$k" '$1 == k { print $2 }' "$tmp/kinds$i")
		row="$row ${v:--} |"
	done
	echo "$row"
done <"$tmp/allkinds"
