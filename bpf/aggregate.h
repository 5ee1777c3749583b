/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The levels above the source (include/rl_agg.h): a packet's prefix
 * aggregate and the interface as a whole, for the default policy and for
 * limit rules, and the verdict of a packet a level refused. Each level's
 * state is a 64-bit word in rl_agg under { masked source, generation, rule
 * slot, level }, stepped by rl_algo.h with compare-and-swap.
 *
 * The order (rl_agg.h): check every level above the source without a
 * write (a refusal drops the packet and charges nothing), step the source
 * as without levels, then charge each level by compare-and-swap. The
 * policy's levels are constants of the program, so with none on the
 * verifier removes all of this and the packet path is the one before.
 *
 * A level's state missing from rl_agg (a new aggregate, or one the LRU
 * forgot) is made by level_new(): carried over from the previous
 * generation after a set, as a source's is, or fresh (a full bucket).
 *
 * Includes level.h (the levels' states), admission.h (the admission
 * cap), table6_sa.h (the IPv6 source level), sample.h, verdict.h, clock.h, maps.h and include/ headers; the
 * packet flow (xdp_ratelimit.bpf.c) and rules.h include it.
 */
#ifndef RL_BPF_AGGREGATE_H
#define RL_BPF_AGGREGATE_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_agg.h"
#include "rl_common.h"
#include "rl_rules.h"
#include "maps.h"
#include "clock.h"
#include "level.h"
#include "admission.h"
#include "table6_sa.h"
#include "verdict.h"
#include "sample.h"

/*
 * The default policy's levels, one global function each: the prefix
 * aggregate of IPv4 source @saddr or of IPv6 source @src, and the
 * interface's limit, each run with @op LVL_OP_CHECK before the source's
 * step (1: within the limit, 0: over it, -1: no state) and LVL_OP_CHARGE
 * after its pass (level_run()). Out of line, so that the level's key and
 * state take no room in the packet path's frame (the verifier's 512 bytes
 * for the deepest chain of calls): the charge looks the state up again
 * rather than keep it across the source's step. One call per level and
 * phase: on a host whose calls pay for a return-stack mitigation (SRSO),
 * each costs about what a hash lookup does.
 */
__noinline int agg_prefix4(struct rl_kcounters *cnt, __be32 saddr, __u32 op, __u64 len, __u64 now)
{
	struct rl_key src = {};

	if (!cnt)
		return -1;
	src.addr[2] = bpf_htonl(0xffff);
	src.addr[3] = saddr;
	return level_run(cnt, LVL(RL_LVL_PREFIX), RL_LVL_PREFIX, &src, op, len, now);
}

__noinline int agg_prefix6(struct rl_kcounters *cnt, const struct rl_key *src, __u32 op, __u64 len,
			   __u64 now)
{
	if (!cnt || !src)
		return -1;
	return level_run(cnt, LVL(RL_LVL_PREFIX), RL_LVL_PREFIX, src, op, len, now);
}

__noinline int agg_iface(struct rl_kcounters *cnt, __u32 op, __u64 len, __u64 now)
{
	/* The levels of the whole interface ignore the source: any key will do. */
	struct rl_key none = {};

	if (!cnt)
		return -1;
	return level_run(cnt, LVL(RL_LVL_IFACE), RL_LVL_IFACE, &none, op, len, now);
}

/* A level's check, as a table's answer: 0 within the limit, the refusal, or -1. */
static __always_inline int checked(int v, __u32 id)
{
	return v == 1 ? 0 : v == 0 ? RL_V_REFUSED(id) : -1;
}

/*
 * The source level, as without levels: the packet flow's limit_v4(), which
 * xdp_ratelimit.bpf.c defines after this header (always inline: the
 * compiler inlines it here all the same).
 */
static __always_inline int limit_v4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, int fast,
				    __u64 now, const int full);

/*
 * An IPv4 source's verdict with the policy's levels: checked, the source
 * stepped (limit_v4(), in line when @fast), charged when it passed. With no
 * level on, limit_v4() alone: the verifier drops the rest. @full (a
 * constant): the program that has levels (xdp_ratelimit.bpf.c), else none.
 */
static __always_inline int limit4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, int fast,
				  const int full)
{
	__u64 now;
	int ret;

	if (!full || !levels_on(RL_LVL_ON4))
		return limit_v4(cnt, saddr, len, fast, rl_now(), full);
	now = rl_now();
	if (lvl_on(RL_LVL_PREFIX, RL_LVL_ON4)) {
		ret = checked(agg_prefix4(cnt, saddr, LVL_OP_CHECK, len, now), RL_LVL_PREFIX);
		if (ret)
			return ret;
	}
	if (lvl_on(RL_LVL_IFACE, RL_LVL_ON4)) {
		ret = checked(agg_iface(cnt, LVL_OP_CHECK, len, now), RL_LVL_IFACE);
		if (ret)
			return ret;
	}
	/* The clock read once: the source stepped at the levels' time. */
	ret = limit_v4(cnt, saddr, len, fast, now, full);
	if (ret != 1)
		return ret;
	if (lvl_on(RL_LVL_PREFIX, RL_LVL_ON4))
		agg_prefix4(cnt, saddr, LVL_OP_CHARGE, len, now);
	if (lvl_on(RL_LVL_IFACE, RL_LVL_ON4))
		agg_iface(cnt, LVL_OP_CHARGE, len, now);
	return 1;
}

/*
 * The IPv6 source level, the packet flow's limit_v6() (with the admission
 * cap on a miss), and hit_v6(), the same after the hit's first round in line.
 */
static __always_inline int limit_v6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 now,
				    __u64 cost, int ret, const int full);
static __always_inline int hit_v6(struct rl_kcounters *cnt, struct rl_key *src, __u32 a0, __u32 a1,
				  __u32 a2, __u32 a3, __u64 now, __u64 cost, const int full);

/*
 * The same for an IPv6 source @src (unmasked): its levels, then its own
 * level in rl_sets6: with its first round in line when @fast (the main
 * program's straight line, fast_v6(): never a link-local source; hit_v6()
 * writes the same source to @src again), else limit_v6().
 */
static __always_inline int limit6(struct rl_kcounters *cnt, struct rl_key *src, __u64 len, int fast,
				  const int full)
{
	__u64 now = rl_now();
	int ret;

	if (!full)
		return limit_v6(cnt, src, now, packet_cost(len), -1, full);
	if (lvl_on(RL_LVL_PREFIX, RL_LVL_ON6)) {
		ret = checked(agg_prefix6(cnt, src, LVL_OP_CHECK, len, now), RL_LVL_PREFIX);
		if (ret)
			return ret;
	}
	if (lvl_on(RL_LVL_IFACE, RL_LVL_ON6)) {
		ret = checked(agg_iface(cnt, LVL_OP_CHECK, len, now), RL_LVL_IFACE);
		if (ret)
			return ret;
	}
	if (fast)
		ret = hit_v6(cnt, src, src->addr[0], src->addr[1], src->addr[2], src->addr[3], now,
			     packet_cost(len), full);
	else
		ret = limit_v6(cnt, src, now, packet_cost(len), -1, full);
	if (ret != 1)
		return ret;
	if (lvl_on(RL_LVL_PREFIX, RL_LVL_ON6))
		agg_prefix6(cnt, src, LVL_OP_CHARGE, len, now);
	if (lvl_on(RL_LVL_IFACE, RL_LVL_ON6))
		agg_iface(cnt, LVL_OP_CHARGE, len, now);
	return 1;
}

/*
 * The verdict of a packet level RL_V_LEVEL_OF(@ret) refused: counted in
 * that level's counter and as limited (or would-drop), sampled with the
 * level in the sample's high 16 bits of the reason (bpf/sample.h).
 */
static __always_inline int decide_level(struct xdp_md *ctx, struct rl_kcounters *cnt, int ret,
					__u64 len)
{
	__u32 id = RL_V_LEVEL_OF(ret);

	if (id >= 1 && id <= RL_LVL_N)
		cnt->lvl_limited[id - 1]++;
	if (rl_cfg.action == RL_ACTION_DRY_RUN) {
		cnt->would_drop++;
		cnt->would_drop_bytes += len;
		sample(ctx, RL_EV_WOULD_DROP | id << 16);
		return rl_count_pass(cnt, len);
	}
	cnt->limited++;
	sample(ctx, RL_EV_LIMITED | id << 16);
	return rl_count_drop(cnt, len);
}

/*
 * A limit rule's levels, for rules.h: the rule @r at index @idx of
 * rl_rules.r[], its source @src unmasked. Checked before the rule's own
 * step, charged after a pass; keyed by the rule's slot and slot generation.
 * In line in rl_rule_apply(): each level is one call of level_do().
 */
static __always_inline __u32 key_fam(const struct rl_key *src)
{
	return !src->addr[0] && !src->addr[1] && src->addr[2] == bpf_htonl(0xffff) ? RL_LVL_ON4 :
										     RL_LVL_ON6;
}

static __always_inline int rule_agg_check(struct rl_kcounters *cnt, const struct rl_krule *r,
					  __u32 idx, const struct rl_key *src, __u64 len, __u64 now)
{
	return levels_check(cnt, &r->cfg, key_fam(src), src, idx, len, now);
}

static __always_inline void rule_agg_charge(struct rl_kcounters *cnt, const struct rl_krule *r,
					    __u32 idx, const struct rl_key *src, __u64 len,
					    __u64 now)
{
	levels_charge(cnt, &r->cfg, key_fam(src), src, idx, len, now);
}

#endif /* RL_BPF_AGGREGATE_H */
