// SPDX-License-Identifier: GPL-2.0-only
/*
 * xdp-ratelimit: the XDP program. Parses the frame, keys the source by its
 * masked address, runs the rate algorithm of include/rl_algo.h against the
 * source's state word (compare-and-swap, so that one source's packets on many
 * CPUs are counted exactly) and counts every verdict in one place.
 */
#include "parsing.h"
#include "verdict.h"

/*
 * Load-time switch for tests: when set, the packet clock is read from the
 * rl_clock map instead of bpf_ktime_get_ns(), so a test chooses each packet's
 * time. It is .rodata: in the production program the branch is dead code
 * that the verifier removes.
 */
const volatile __u8 rl_test_clock = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct rl_state_key);
	__type(value, __u64);
	__uint(max_entries, RL_DEFAULT_MAX_SOURCES);
} rl_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_config);
	__uint(max_entries, 2);
} rl_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_ctl);
	__uint(max_entries, 1);
} rl_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rl_counters);
	__uint(max_entries, 1);
} rl_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} rl_clock SEC(".maps");

/* What decided a packet's fate; counted in one place, count_verdict(). */
enum rl_reason {
	RL_R_WITHIN, /* under its limit: pass */
	RL_R_LIMITED, /* over its limit: drop */
	RL_R_WOULD_DROP, /* over its limit in dry-run: pass */
	RL_R_NOT_IP, /* pass untouched */
	RL_R_MALFORMED, /* pass or drop as configured */
	RL_R_FAILED, /* insert failed: pass or drop as configured */
	RL_R_NO_CONFIG, /* not configured yet: pass */
	RL_R_ND, /* IPv6 neighbour discovery: pass untouched */
};

static __always_inline __u64 rl_now(const struct rl_config *cfg)
{
	if (rl_test_clock) {
		__u32 zero = 0;
		__u64 *t = bpf_map_lookup_elem(&rl_clock, &zero);

		return t ? *t : 0;
	}
	if (cfg->clock == RL_CLOCK_COARSE)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

/* @v4 is an enum rl_key_kind: masked by --prefix4, --prefix6, or kept whole. */
static __always_inline void mask_key(struct rl_key *k, const struct rl_key *src, int v4,
				     __u32 mask4, const __u32 *mask6)
{
	if (v4 == RL_KEY_V4) {
		k->addr[0] = src->addr[0];
		k->addr[1] = src->addr[1];
		k->addr[2] = src->addr[2];
		k->addr[3] = src->addr[3] & mask4;
	} else if (v4 == RL_KEY_LL) {
		*k = *src;
	} else {
		k->addr[0] = src->addr[0] & mask6[0];
		k->addr[1] = src->addr[1] & mask6[1];
		k->addr[2] = src->addr[2] & mask6[2];
		k->addr[3] = src->addr[3] & mask6[3];
	}
}

/* The state a new source starts with: carried over from the previous generation, or fresh. */
static __always_inline __u64 first_state(struct rl_counters *cnt, const struct rl_config *cfg,
					 const struct rl_key *src, int v4, __u64 now)
{
	struct rl_state_key pk = {};
	__u64 *ps;

	if (cfg->has_prev) {
		mask_key(&pk.src, src, v4, cfg->prev_mask4, cfg->prev_mask6);
		pk.gen = cfg->gen - 1;
		ps = bpf_map_lookup_elem(&rl_state, &pk);
		if (ps) {
			cnt->carried++;
			return rl_carry_state(cfg, *ps, now);
		}
	}
	return rl_initial_state(&cfg->params, now);
}

/* What inserting a new source needs, behind one pointer (a subprogram takes five registers). */
struct rl_miss {
	struct rl_counters *cnt;
	const struct rl_config *cfg;
	const struct rl_key *src;
	struct rl_state_key *key;
	__u64 now, cost;
	int v4;
};

#define RL_RETRY_LOOKUP 2

/*
 * A source without state: insert it. It is a subprogram rather than inlined
 * so that the common path, a hit, is short straight-line code instead of a
 * jump over some 850 instructions (side by side: 1.19x against 1.24x
 * reference (c') in one run, about the size of this machine's run-to-run
 * noise). Returns as rate_limit(), or RL_RETRY_LOOKUP when another CPU
 * inserted the source first.
 */
static __noinline int new_source(struct rl_miss *m)
{
	const struct rl_config *cfg = m->cfg;
	__u64 val, next;
	int pass, err;

	if (!cfg) /* cannot happen; the verifier needs to know */
		return -1;
	val = first_state(m->cnt, cfg, m->src, m->v4, m->now);
	pass = rl_step(&cfg->params, val, m->now, m->cost, &next);
	if (pass)
		val = next;
	err = bpf_map_update_elem(&rl_state, m->key, &val, BPF_NOEXIST);
	if (!err) {
		m->cnt->new_sources++;
		return pass;
	}
	if (err == -17 /* EEXIST */)
		return RL_RETRY_LOOKUP;
	m->cnt->insert_failed++;
	return -1;
}

/* 1: within the limit; 0: over it; -1: the source could not be tracked. */
static __always_inline int rate_limit(struct rl_counters *cnt, const struct rl_config *cfg,
				      const struct rl_key *src, int v4, __u64 len)
{
	const struct rl_params *p = &cfg->params;
	struct rl_state_key k = {};
	__u64 now = rl_now(cfg), cost = 1;
	__u64 *st, old, next;
	int i, ret;

	/* The bound the parameters were checked against (frames are shorter anyway). */
	if (p->bytes)
		cost = len < RL_MAX_FRAME ? len : RL_MAX_FRAME;
	mask_key(&k.src, src, v4, cfg->mask4, cfg->mask6);
	k.gen = cfg->gen;
	st = bpf_map_lookup_elem(&rl_state, &k);
	if (!st) {
		struct rl_miss m = { .cnt = cnt,
				     .cfg = cfg,
				     .src = src,
				     .key = &k,
				     .now = now,
				     .cost = cost,
				     .v4 = v4 };

		ret = new_source(&m);
		if (ret != RL_RETRY_LOOKUP)
			return ret;
		/* Another CPU inserted it first: take its entry. */
		st = bpf_map_lookup_elem(&rl_state, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	for (i = 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)st;
		if (!rl_step(p, old, now, cost, &next))
			return 0;
		if (__sync_val_compare_and_swap(st, old, next) == old)
			return 1;
		cnt->cas_retries++;
	}
	cnt->cas_exhausted++;
	return 0;
}

static __always_inline int count_verdict(struct rl_counters *cnt, const struct rl_config *cfg,
					 enum rl_reason reason, __u64 len)
{
	int verdict = XDP_PASS;

	switch (reason) {
	case RL_R_LIMITED:
		cnt->limited++;
		verdict = XDP_DROP;
		break;
	case RL_R_WOULD_DROP:
		cnt->would_drop++;
		cnt->would_drop_bytes += len;
		break;
	case RL_R_NOT_IP:
		cnt->not_ip++;
		break;
	case RL_R_MALFORMED:
		if (cfg && cfg->malformed_drop)
			verdict = XDP_DROP;
		break;
	case RL_R_FAILED:
		if (cfg && cfg->fail_policy == RL_FAIL_DROP)
			verdict = XDP_DROP;
		break;
	case RL_R_NO_CONFIG:
		cnt->no_config++;
		break;
	case RL_R_ND:
		cnt->nd++;
		break;
	case RL_R_WITHIN:
		break;
	}
	return rl_count_verdict(cnt, verdict, len);
}

static __always_inline enum rl_reason classify(struct xdp_md *ctx, struct rl_counters *cnt,
					       const struct rl_config *cfg, __u64 len)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	struct rl_key src;
	__u32 bad = 0;
	__be16 proto;
	int v4, ret, nd;

	if (parse_eth(&c, &proto, &bad))
		goto malformed;
	if (proto == bpf_htons(ETH_P_IP)) {
		if (parse_ipv4(&c, &src, &bad))
			goto malformed;
		v4 = RL_KEY_V4;
		cnt->ipv4++;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ipv6(&c, &src, &bad, &nd))
			goto malformed;
		if (nd)
			return RL_R_ND;
		/*
		 * An IPv4-mapped source (::ffff:a.b.c.d) is that IPv4 host, a
		 * link-local one is keyed whole: see rl_key.h.
		 */
		if (!src.addr[0] && !src.addr[1] && src.addr[2] == bpf_htonl(0xffff))
			v4 = RL_KEY_V4;
		else if ((src.addr[0] & bpf_htonl(RL_LL_MASK)) == bpf_htonl(RL_LL_PREFIX))
			v4 = RL_KEY_LL;
		else
			v4 = RL_KEY_V6;
		cnt->ipv6++;
	} else {
		return RL_R_NOT_IP;
	}
	if (!cfg)
		return RL_R_NO_CONFIG;
	ret = rate_limit(cnt, cfg, &src, v4, len);
	if (ret < 0)
		return RL_R_FAILED;
	if (ret)
		return RL_R_WITHIN;
	return cfg->action == RL_ACTION_DRY_RUN ? RL_R_WOULD_DROP : RL_R_LIMITED;
malformed:
	if (bad < RL_BAD__COUNT)
		cnt->malformed[bad]++;
	return RL_R_MALFORMED;
}

SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	__u64 len = ctx->data_end - ctx->data;
	const struct rl_config *cfg = NULL;
	struct rl_counters *cnt;
	struct rl_ctl *ctl;
	__u32 zero = 0;

	cnt = bpf_map_lookup_elem(&rl_counters, &zero);
	if (!cnt)
		return XDP_PASS; /* cannot happen: a one-slot per-CPU array */
	ctl = bpf_map_lookup_elem(&rl_ctl, &zero);
	if (ctl && ctl->active < 2) {
		__u32 slot = ctl->active;

		cfg = bpf_map_lookup_elem(&rl_config, &slot);
		/* A slot never written has gen 0: not configured yet. */
		if (cfg && !cfg->gen)
			cfg = NULL;
	}
	return count_verdict(cnt, cfg, classify(ctx, cnt, cfg, len), len);
}

char LICENSE[] SEC("license") = "GPL";
