// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where xdp_ratelimit's time goes beyond reference (c'), the stricter of the
 * two GCRA references (bench_ref.bpf.c): programs built up from (c') one
 * feature at a time, measured with it by rl-bench micro (the "steps"
 * table), never attached. Each has its own LRU map; steps 3 and 4 read a
 * configuration written by userspace, as xdp_ratelimit does.
 *
 *	step0: (c') again, from this object: the spread between two copies of the
 *	       same program is the noise floor of the table;
 *	step1: + the configuration generation in the key (20 bytes, not 16);
 *	step2: + per-CPU counters (family, packets and bytes by verdict);
 *	step3: + the double-buffered configuration (two array lookups) and the
 *	       source mask;
 *	step4: + the generic algorithm step of include/rl_algo.h (the configured
 *	       token bucket) instead of (c')'s inline GCRA.
 * xdp_ratelimit itself adds the compare-and-swap retry loop, the clock
 * choice, byte costs, IPv4-mapped sources and the verdict reasons.
 */
#include "bench_ref.h"
#include "verdict.h"

/* (c')'s GCRA: 100 Mpps, 10 ms of tolerance: every packet passes. */
#define STEP_INTERVAL_NS 10
#define STEP_TAU_NS	 10000000

#define STEP_MAP(name, key_type)                     \
	struct {                                     \
		__uint(type, BPF_MAP_TYPE_LRU_HASH); \
		__type(key, key_type);               \
		__type(value, __u64);                \
		__uint(max_entries, 1);              \
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

/*
 * The common start of steps 2 to 4, in xdp_ratelimit's order: the counters,
 * the configuration (@cfg non-NULL: steps 3 and 4), the key, the family
 * counter, then the mask and generation. 0, or -1: pass the frame as it is.
 */
static __always_inline int step_begin(struct xdp_md *ctx, struct rl_state_key *k,
				      struct rl_counters **cnt, const struct rl_config **cfg)
{
	__u32 zero = 0;

	*cnt = bpf_map_lookup_elem(&step_counters, &zero);
	if (!*cnt)
		return -1;
	if (cfg)
		*cfg = step_cfg();
	if (ref_key(ctx, &k->src))
		return -1;
	(*cnt)->ipv6++;
	if (!cfg) {
		k->gen = 1;
		return 0;
	}
	if (!*cfg)
		return -1;
	step_mask(&k->src, *cfg);
	k->gen = (*cfg)->gen;
	return 0;
}

SEC("xdp")
int step0(struct xdp_md *ctx)
{
	struct rl_key key;

	if (ref_key(ctx, &key))
		return XDP_PASS;
	return ref_gcra_on(&step0_map, &key, STEP_INTERVAL_NS, STEP_TAU_NS);
}

SEC("xdp")
int step1(struct xdp_md *ctx)
{
	struct rl_state_key k = {};

	if (ref_key(ctx, &k.src))
		return XDP_PASS;
	k.gen = 1;
	return ref_gcra_on(&step1_map, &k, STEP_INTERVAL_NS, STEP_TAU_NS);
}

SEC("xdp")
int step2(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end;
	struct rl_state_key k = {};
	struct rl_counters *cnt;

	len -= ctx->data;
	if (step_begin(ctx, &k, &cnt, NULL))
		return XDP_PASS;
	return rl_count_verdict(cnt, ref_gcra_on(&step2_map, &k, STEP_INTERVAL_NS, STEP_TAU_NS),
				len);
}

SEC("xdp")
int step3(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end;
	const struct rl_config *cfg;
	struct rl_state_key k = {};
	struct rl_counters *cnt;

	len -= ctx->data;
	if (step_begin(ctx, &k, &cnt, &cfg))
		return XDP_PASS;
	return rl_count_verdict(cnt, ref_gcra_on(&step3_map, &k, STEP_INTERVAL_NS, STEP_TAU_NS),
				len);
}

SEC("xdp")
int step4(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end, *st, now, old, next;
	const struct rl_config *cfg;
	struct rl_state_key k = {};
	struct rl_counters *cnt;
	int verdict = XDP_PASS;

	len -= ctx->data;
	if (step_begin(ctx, &k, &cnt, &cfg))
		return XDP_PASS;
	now = bpf_ktime_get_ns();
	st = bpf_map_lookup_elem(&step4_map, &k);
	if (!st) {
		old = rl_initial_state(&cfg->params, now);
		bpf_map_update_elem(&step4_map, &k, &old, BPF_NOEXIST);
	} else {
		old = *(volatile __u64 *)st;
		if (!rl_step(&cfg->params, old, now, 1, &next) ||
		    __sync_val_compare_and_swap(st, old, next) != old)
			verdict = XDP_DROP;
	}
	return rl_count_verdict(cnt, verdict, len);
}

char LICENSE[] SEC("license") = "GPL";
