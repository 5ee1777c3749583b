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
 * cap), table6.h (the IPv6 source level), sample.h, verdict.h, clock.h, maps.h and include/ headers; the
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
#include "table6.h"
#include "verdict.h"
#include "sample.h"

/*
 * The default policy's levels for IPv4 source @saddr: check (0, or the
 * refusal), and charge once the source passed. Global functions, so that
 * the levels' key and states take no room in the packet path's frame (the
 * verifier's 512 bytes for the deepest chain of calls): the charge looks
 * each state up again rather than keep it across the source's step.
 */
__noinline int agg_check4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, __u64 now)
{
	struct rl_key src = {};

	if (!cnt)
		return -1;
	src.addr[2] = bpf_htonl(0xffff);
	src.addr[3] = saddr;
	return levels_check(cnt, &rl_cfg, RL_LVL_ON4, &src, RL_RULE_SLOTS, len, now);
}

__noinline int agg_charge4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, __u64 now)
{
	struct rl_key src = {};

	if (!cnt)
		return 0;
	src.addr[2] = bpf_htonl(0xffff);
	src.addr[3] = saddr;
	levels_charge(cnt, &rl_cfg, RL_LVL_ON4, &src, RL_RULE_SLOTS, len, now);
	return 0;
}

/* The same for an IPv6 source @src (unmasked). */
__noinline int agg_check6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 len, __u64 now)
{
	if (!cnt || !src)
		return -1;
	return levels_check(cnt, &rl_cfg, RL_LVL_ON6, src, RL_RULE_SLOTS, len, now);
}

__noinline int agg_charge6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 len, __u64 now)
{
	if (!cnt || !src)
		return 0;
	levels_charge(cnt, &rl_cfg, RL_LVL_ON6, src, RL_RULE_SLOTS, len, now);
	return 0;
}

/*
 * The source level, as without levels: the packet flow's limit_v4(), which
 * xdp_ratelimit.bpf.c defines after this header (always inline: the
 * compiler inlines it here all the same).
 */
static __always_inline int limit_v4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, int fast);

/*
 * An IPv4 source's verdict with the policy's levels: checked, the source
 * stepped (limit_v4(), in line when @fast), charged when it passed. With no
 * level on, limit_v4() alone: the verifier drops the rest.
 */
static __always_inline int limit4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, int fast)
{
	__u64 now;
	int ret;

	if (!levels_on(RL_LVL_ON4))
		return limit_v4(cnt, saddr, len, fast);
	now = rl_now();
	ret = agg_check4(cnt, saddr, len, now);
	if (ret)
		return ret;
	ret = limit_v4(cnt, saddr, len, fast);
	if (ret == 1)
		agg_charge4(cnt, saddr, len, now);
	return ret;
}

/*
 * The same for an IPv6 source: its levels, the admission cap (admit6(),
 * before limit_lru6(): see there), limit_lru6() for its own level.
 */
static __always_inline int limit6(struct rl_kcounters *cnt, const struct rl_key *src, int kind,
				  __u64 len)
{
	__u64 now = rl_now();
	int ret;

	if (levels_on(RL_LVL_ON6)) {
		ret = agg_check6(cnt, src, len, now);
		if (ret)
			return ret;
	}
	ret = admit_on(RL_LVL_ON6) ? admit6(cnt, src, now, len) : RL_NOT_HELD;
	if (ret == RL_NOT_HELD)
		ret = limit_lru6(cnt, src, kind, now, packet_cost(len));
	if (ret == 1 && levels_on(RL_LVL_ON6))
		agg_charge6(cnt, src, len, now);
	return ret;
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
