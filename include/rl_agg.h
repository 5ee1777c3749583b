/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Limits above the source (issue #28): besides its source's own state, a
 * packet can be charged to its prefix aggregate (--aggregate4 N,
 * --aggregate6 N, --aggregate-rate), to the interface as a whole
 * (--iface-rate), and, when it comes from a new source beyond the admission
 * cap (--admit-rate), to the one state all such sources share. Each level is
 * a policy of its own, run by the same steps of rl_algo.h on a state word
 * updated by compare-and-swap; a packet passes only if every level passes.
 * Shared by the XDP program (bpf/aggregate.h, bpf/admission.h), userspace's
 * models (simulate) and the readers (top, the exporter).
 *
 * The order (docs/design.md, "Aggregate limits"): every level above the
 * source is checked first without a write; a level that refuses drops the
 * packet, and nothing is charged anywhere (a flood refused by its /24 does
 * not even insert its sources). Then the source's own state is stepped, with
 * its compare-and-swap, as without levels. Only a packet its source passed
 * is charged to the levels above, each by a compare-and-swap that steps the
 * state again: if another CPU took the last credit between the check and the
 * charge, the packet is still passed (its source has paid) and the level is
 * charged past its limit by its cost (rl_charge(): a debt the clock pays
 * off, counted in agg_overdraft). In-flight packets are at most one per
 * CPU, so a level passes at most rate x t + burst + (CPUs - 1) packets' cost
 * over any time t; on one CPU, or with no race, exactly what the algorithm
 * passes.
 */
#ifndef RL_AGG_H
#define RL_AGG_H

#include <linux/types.h>
#include "rl_algo.h"
#include "rl_key.h"

/* The levels of a packet's verdict. */
enum rl_level_id {
	RL_LVL_SOURCE = 0, /* its source's own state (the source tables) */
	RL_LVL_PREFIX = 1, /* its prefix aggregate: --aggregate4, --aggregate6 */
	RL_LVL_IFACE = 2, /* the interface (in a rule: the rule) as a whole: --iface-rate */
	RL_LVL_NEW = 3, /* new sources beyond the admission cap, limited as one source */
	RL_LVL_ADMIT = 4, /* the admission cap itself: fresh states granted (not a verdict) */
	RL_LVL__COUNT,
};

/* struct rl_config's lvl[] holds the levels above the source: lvl[id - 1]. */
#define RL_LVL_N      (RL_LVL__COUNT - 1)
#define RL_LVL(c, id) (&(c)->lvl[(id)-1])

/* struct rl_level.on: which packets the level applies to. */
#define RL_LVL_ON4 0x1 /* IPv4 sources (IPv4-mapped IPv6 ones too) */
#define RL_LVL_ON6 0x2 /* IPv6 sources */

/*
 * One level's policy: as struct rl_config holds the source's, with what
 * carries its states over a set. The algorithm and window are the
 * policy's; rate, burst and unit (packets or bytes) are the level's own.
 */
struct rl_level {
	struct rl_params params;
	struct rl_params prev; /* the level under the previous configuration */
	__u64 carry_mult; /* as rl_config's: ahead_new = ahead_prev * mult >> shift */
	__u32 carry_shift;
	__u32 carry; /* enum rl_carry */
	__u32 on; /* RL_LVL_ON4 | RL_LVL_ON6, 0: off */
	__u32 has_prev; /* look a missing state up under the previous generation */
	/* The prefix level: the masks (network order), and the previous ones. */
	__u32 mask4, prev_mask4;
	__u32 mask6[4], prev_mask6[4];
	/* As given, for status, set and rule list. */
	__u32 prefix4, prefix6;
	__u64 rate_num, rate_den;
	__u64 burst; /* cost units (bucket algorithms) */
};

/*
 * The key of a level's state in rl_agg (an LRU hash): the source masked by
 * the level's prefix (zero for the levels of the whole interface), the
 * generation of the policy that owns it (the configuration's, or a rule's
 * slot generation), the rule's slot (RL_AGG_DEFAULT: the default policy)
 * and the level.
 */
struct rl_agg_key {
	struct rl_key src;
	__u32 gen;
	__u16 slot;
	__u8 level; /* enum rl_level_id */
	__u8 pad;
};

#define RL_AGG_DEFAULT 0xffff

/*
 * Aggregate states per IPv4 source asked for (--max-sources): rl_agg holds
 * max_sources / RL_AGG_RATIO of them (at least RL_AGG_MIN), an LRU hash of
 * about 100 bytes an entry, made only while a level is on. A /24 holds up
 * to 256 sources: a sixteenth leaves room for aggregates of few sources.
 */
#define RL_AGG_RATIO 16
#define RL_AGG_MIN   1024

/*
 * A packet of @cost at @now (rl_tick() @tk of the level) against state @st
 * of level @l, without a write: 1 within the level's limit, 0 over it.
 */
RL_INLINE int rl_level_check(const struct rl_level *l, __u64 st, __u64 now, __u64 tk, __u64 cost)
{
	__u64 next;

	return rl_step_at(&l->params, st, now, tk, cost, &next);
}

/*
 * A packet of @cost charged past level @l's limit on state @st, @tk being
 * rl_tick() at the packet's time: its TAT moved on by the cost (a debt the
 * clock pays off), at most to the largest TAT a packet can store
 * (ahead_max - RL_SKEW_VT, as rl_charge()), or its window's count raised by
 * the cost, saturated at the field's largest value.
 */
RL_INLINE void rl_level_over(const struct rl_level *l, __u64 st, __u64 tk, __u64 cost, __u64 *next)
{
	const struct rl_params *p = &l->params;
	__u64 ahead, c, cap, e = 0, k, prev, cur, max;

	if (p->algo == RL_ALGO_TOKEN_BUCKET || p->algo == RL_ALGO_GCRA) {
		/* cost x unit_cost <= tau + the largest cost <= RL_AHEAD_LIMIT: no overflow. */
		ahead = rl_ahead(p, st, tk);
		c = cost * p->unit_cost;
		cap = p->ahead_max - RL_SKEW_VT;
		*next = tk + (ahead >= cap || c > cap - ahead ? cap : ahead + c);
		return;
	}
	max = (1ULL << p->cnt_bits) - 1;
	k = rl_window_ahead(p, st, tk, &e);
	rl_window_counts(p, st, k, &prev, &cur);
	cur = cost > max - cur ? max : cur + cost;
	if (p->algo == RL_ALGO_FIXED_WINDOW)
		*next = ((k & p->id_mask) << p->cnt_bits) | cur;
	else
		*next = ((((k & p->id_mask) << p->cnt_bits) | prev) << p->cnt_bits) | cur;
}

/*
 * The charge of a packet its source passed, on state @st: the step's next
 * state, or, over the limit (another CPU took the last credit since the
 * check), rl_level_over()'s. Returns 1 when within the limit, 0 when
 * charged past it.
 */
RL_INLINE int rl_level_charge(const struct rl_level *l, __u64 st, __u64 now, __u64 tk, __u64 cost,
			      __u64 *next)
{
	if (rl_step_at(&l->params, st, now, tk, cost, next))
		return 1;
	rl_level_over(l, st, tk, cost, next);
	return 0;
}

/* The cost of a packet of @len bytes at level @l: its length (bounded), or 1. */
RL_INLINE __u64 rl_level_cost(const struct rl_level *l, __u64 len)
{
	if (l->params.bytes)
		return len < RL_MAX_FRAME ? len : RL_MAX_FRAME;
	return 1;
}

/*
 * The admission cap (--admit-rate): a source the table does not hold gets
 * a state of its own only while the cap's bucket (level RL_LVL_ADMIT, in
 * new sources per second) has credit, or when it is seen again: a packet
 * of it arrives within RL_ADMIT_SEEN_NS of one that was refused a state.
 * Until then its packets are limited together with every other such
 * source's, as one source of the policy (level RL_LVL_NEW). Refusals are
 * remembered in rl_admit, an array of 2^bits 64-bit words indexed by a
 * keyed hash of the source (an array's values take 8 bytes anyway): a word
 * is a 32-bit tag from a second hash and the time of the refusal in units
 * of 2^RL_ADMIT_TICK_SHIFT ns, mod 2^32 (2.3 years), odd (0 is an empty
 * word). A word is overwritten by any later refusal that hashes to it, so a
 * source is seen again only if no other refusal took its word in between;
 * a source whose tag matches another's (1 in 2^32 of those that share a
 * word) is taken as seen.
 */
#define RL_ADMIT_SEEN_NS    (60ULL * 1000000000ULL)
#define RL_ADMIT_TICK_SHIFT 24
#define RL_ADMIT_SEEN_TICKS (RL_ADMIT_SEEN_NS >> RL_ADMIT_TICK_SHIFT)
/* rl_admit's words: 2^bits >= --max-sources, within these (128 KiB to 512 MiB). */
#define RL_ADMIT_BITS_MIN 14
#define RL_ADMIT_BITS_MAX 26

/* The mix of include/rl_sa.h's hash (murmur3's finalizer), for the admission cap's own. */
RL_INLINE __u32 rl_admit_mix(__u32 x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return x;
}

/*
 * The admission cap's hash of a masked source @a (network order, IPv4 in
 * a[3] when @v4), keyed by the limiter's secret: which word of rl_admit it
 * uses (the low bits), and from it the tag, rl_admit_tag().
 */
RL_INLINE __u32 rl_admit_hash(const __u32 *a, int v4, __u64 key)
{
	__u32 x = (__u32)key ^ 0x243f6a88U;

	if (v4) {
		x = rl_admit_mix(x ^ a[3]);
	} else {
		x = rl_admit_mix(x ^ a[0]);
		x = rl_admit_mix(x ^ a[1]);
		x = rl_admit_mix(x ^ a[2]);
		x = rl_admit_mix(x ^ a[3]);
	}
	return rl_admit_mix(x ^ (__u32)(key >> 32));
}

RL_INLINE __u64 rl_admit_tag(__u32 h)
{
	return (__u64)rl_admit_mix(h + 0x9e3779b9U) << 32;
}

/* The word that records a refusal at @now of a source of hash @h. */
RL_INLINE __u64 rl_admit_word(__u32 h, __u64 now)
{
	return rl_admit_tag(h) | ((__u32)(now >> RL_ADMIT_TICK_SHIFT) | 1);
}

/* Does word @w say that the source of hash @h was refused within RL_ADMIT_SEEN_NS of @now? */
RL_INLINE int rl_admit_seen(__u64 w, __u32 h, __u64 now)
{
	__u32 cur = (__u32)(now >> RL_ADMIT_TICK_SHIFT) | 1;

	return (__u32)w && (w & 0xffffffff00000000ULL) == rl_admit_tag(h) &&
	       (__u32)(cur - (__u32)w) <= RL_ADMIT_SEEN_TICKS;
}

#endif /* RL_AGG_H */
