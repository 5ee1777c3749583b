// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where xdp_ratelimit's time goes beyond reference (c): programs built up from
 * (c) one feature at a time, measured with it by rl-bench micro (the "steps"
 * table), never attached. Each has its own LRU map; steps 3 and 4 read a
 * configuration written by userspace, as xdp_ratelimit does.
 *
 *	step0: (c) again, from this object: the spread between two copies of the
 *	       same program is the noise floor of the table;
 *	step1: + the configuration generation in the key (20 bytes, not 16);
 *	step2: + per-CPU counters (family, packets and bytes by verdict);
 *	step3: + the double-buffered configuration (two array lookups) and the
 *	       source mask;
 *	step4: + the generic algorithm step of include/rl_algo.h (the configured
 *	       token bucket) instead of (c)'s inline GCRA.
 * xdp_ratelimit itself adds the compare-and-swap retry loop, the clock
 * choice, byte costs, IPv4-mapped sources and the verdict reasons.
 */
#include "parsing.h"

/* (c)'s GCRA: 100 Mpps, 10 ms of tolerance: every packet passes. */
#define STEP_INTERVAL_NS 10
#define STEP_TAU_NS 10000000

#define STEP_MAP(name, key_type)                          \
	struct {                                          \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);      \
		__type(key, key_type);                    \
		__type(value, __u64);                     \
		__uint(max_entries, 1);                   \
	} name SEC(".maps")

STEP_MAP(step0_map, struct rl_key);
STEP_MAP(step1_map, struct rl_state_key);
STEP_MAP(step2_map, struct rl_state_key);
STEP_MAP(step3_map, struct rl_state_key);
STEP_MAP(step4_map, struct rl_state_key);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_config);
	__uint(max_entries, 2);
} step_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_ctl);
	__uint(max_entries, 1);
} step_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_counters);
	__uint(max_entries, 1);
} step_counters SEC(".maps");

static __always_inline int step_key(struct xdp_md *ctx, struct rl_key *key)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	__u32 bad = 0;
	__be16 proto;

	if (parse_eth(&c, &proto, &bad))
		return -1;
	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(&c, key, &bad);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(&c, key, &bad);
	return -1;
}

/* Reference (c)'s lookup, clock and GCRA compare-and-swap, on @map. */
static __always_inline int step_gcra(void *map, const void *key)
{
	__u64 *v, now, tat, base;

	now = bpf_ktime_get_ns();
	v = bpf_map_lookup_elem(map, key);
	if (!v) {
		tat = now + STEP_INTERVAL_NS;
		bpf_map_update_elem(map, key, &tat, BPF_NOEXIST);
		return XDP_PASS;
	}
	tat = *(volatile __u64 *)v;
	base = (__s64)(tat - now) > 0 ? tat : now;
	if (base - now > STEP_TAU_NS)
		return XDP_DROP;
	if (__sync_val_compare_and_swap(v, tat, base + STEP_INTERVAL_NS) != tat)
		return XDP_DROP;
	return XDP_PASS;
}

static __always_inline int step_count(struct rl_counters *cnt, int verdict, __u64 len)
{
	cnt->rx_packets++;
	cnt->rx_bytes += len;
	if (verdict == XDP_DROP) {
		cnt->dropped++;
		cnt->dropped_bytes += len;
	} else {
		cnt->passed++;
		cnt->passed_bytes += len;
	}
	return verdict;
}

static __always_inline const struct rl_config *step_cfg(void)
{
	struct rl_ctl *ctl;
	__u32 zero = 0, slot;
	const struct rl_config *cfg;

	ctl = bpf_map_lookup_elem(&step_ctl, &zero);
	if (!ctl || ctl->active >= 2)
		return NULL;
	slot = ctl->active;
	cfg = bpf_map_lookup_elem(&step_config, &slot);
	return cfg && cfg->gen ? cfg : NULL;
}

static __always_inline void step_mask(struct rl_key *k, const struct rl_config *cfg)
{
	k->addr[0] &= cfg->mask6[0];
	k->addr[1] &= cfg->mask6[1];
	k->addr[2] &= cfg->mask6[2];
	k->addr[3] &= cfg->mask6[3];
}

SEC("xdp")
int step0(struct xdp_md *ctx)
{
	struct rl_key key;

	if (step_key(ctx, &key))
		return XDP_PASS;
	return step_gcra(&step0_map, &key);
}

SEC("xdp")
int step1(struct xdp_md *ctx)
{
	struct rl_state_key k = {};

	if (step_key(ctx, &k.src))
		return XDP_PASS;
	k.gen = 1;
	return step_gcra(&step1_map, &k);
}

SEC("xdp")
int step2(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end;
	struct rl_state_key k = {};
	struct rl_counters *cnt;
	__u32 zero = 0;

	len -= ctx->data;
	cnt = bpf_map_lookup_elem(&step_counters, &zero);
	if (!cnt)
		return XDP_PASS;
	if (step_key(ctx, &k.src))
		return XDP_PASS;
	cnt->ipv6++;
	k.gen = 1;
	return step_count(cnt, step_gcra(&step2_map, &k), len);
}

SEC("xdp")
int step3(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end;
	const struct rl_config *cfg;
	struct rl_state_key k = {};
	struct rl_counters *cnt;
	__u32 zero = 0;

	len -= ctx->data;
	cnt = bpf_map_lookup_elem(&step_counters, &zero);
	if (!cnt)
		return XDP_PASS;
	cfg = step_cfg();
	if (step_key(ctx, &k.src))
		return XDP_PASS;
	cnt->ipv6++;
	if (!cfg)
		return XDP_PASS;
	step_mask(&k.src, cfg);
	k.gen = cfg->gen;
	return step_count(cnt, step_gcra(&step3_map, &k), len);
}

SEC("xdp")
int step4(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end, *st, now, old, next;
	const struct rl_config *cfg;
	struct rl_state_key k = {};
	struct rl_counters *cnt;
	__u32 zero = 0;

	len -= ctx->data;
	cnt = bpf_map_lookup_elem(&step_counters, &zero);
	if (!cnt)
		return XDP_PASS;
	cfg = step_cfg();
	if (step_key(ctx, &k.src))
		return XDP_PASS;
	cnt->ipv6++;
	if (!cfg)
		return XDP_PASS;
	step_mask(&k.src, cfg);
	k.gen = cfg->gen;
	now = bpf_ktime_get_ns();
	st = bpf_map_lookup_elem(&step4_map, &k);
	if (!st) {
		old = rl_initial_state(&cfg->params, now);
		bpf_map_update_elem(&step4_map, &k, &old, BPF_NOEXIST);
		return step_count(cnt, XDP_PASS, len);
	}
	old = *(volatile __u64 *)st;
	if (!rl_step(&cfg->params, old, now, 1, &next))
		return step_count(cnt, XDP_DROP, len);
	if (__sync_val_compare_and_swap(st, old, next) != old)
		return step_count(cnt, XDP_DROP, len);
	return step_count(cnt, XDP_PASS, len);
}

char LICENSE[] SEC("license") = "GPL";
