/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the benchmark's reference programs share (bench_ref.bpf.c). */
#ifndef RL_BENCH_REF_H
#define RL_BENCH_REF_H

#include "parsing.h"

/* The source key as xdp_ratelimit builds it (IPv4-mapped for IPv4); -1 if not IP. */
static __always_inline int ref_key(struct xdp_md *ctx, struct rl_key *key)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	__u32 bad = 0;
	__be16 proto;
	int nd;

	if (parse_eth(&c, &proto, &bad))
		return -1;
	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(&c, key, &bad);
	/* Neighbour discovery passes untouched, as in xdp_ratelimit: like not IP. */
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(&c, key, &bad, &nd) || nd ? -1 : 0;
	return -1;
}

/*
 * One GCRA compare-and-swap on the TAT at @tat (emission interval and
 * tolerance in ns): XDP_PASS, or XDP_DROP when over the limit or when another
 * CPU changed the TAT first.
 */
static __always_inline int ref_gcra_cas(__u64 *tat_p, __u64 now, __u64 interval, __u64 tau)
{
	__u64 tat = *(volatile __u64 *)tat_p;
	__u64 base = (__s64)(tat - now) > 0 ? tat : now;

	if (base - now > tau)
		return XDP_DROP;
	if (__sync_val_compare_and_swap(tat_p, tat, base + interval) != tat)
		return XDP_DROP;
	return XDP_PASS;
}

/*
 * Reference (c')'s limiter on @map, whose value is the TAT: a clock read,
 * one lookup with an insert on a miss, and one GCRA compare-and-swap.
 */
static __always_inline int ref_gcra_on(void *map, const void *key, __u64 interval, __u64 tau)
{
	__u64 *v, now, tat;

	now = bpf_ktime_get_ns();
	v = bpf_map_lookup_elem(map, key);
	if (!v) {
		tat = now + interval;
		bpf_map_update_elem(map, key, &tat, BPF_NOEXIST);
		return XDP_PASS;
	}
	return ref_gcra_cas(v, now, interval, tau);
}

#endif /* RL_BENCH_REF_H */
