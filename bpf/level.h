/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The states of the levels above the source (include/rl_agg.h) in rl_agg:
 * their keys, finding or making one (level_new(): carried over from the
 * previous generation after a set, as a source's state is, or fresh),
 * checking a packet against them without a write and charging it, by
 * compare-and-swap, once its source passed it. What aggregate.h (the
 * prefix and interface levels) and admission.h (the admission cap) share.
 *
 * Includes state.h, clock.h, maps.h and include/ headers only.
 */
#ifndef RL_BPF_LEVEL_H
#define RL_BPF_LEVEL_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_agg.h"
#include "rl_common.h"
#include "rl_rules.h"
#include "maps.h"
#include "clock.h"
#include "state.h"

/*
 * A table's answer for a packet a level above the source refused:
 * RL_V_REFUSED(id), at or below RL_V_LEVEL, beside limit_v4()'s 1, 0,
 * RL_CAS_LOST and -1 (decide() in xdp_ratelimit.bpf.c).
 */
#define RL_V_LEVEL	  (-16)
#define RL_V_REFUSED(id)  (RL_V_LEVEL - (id))
#define RL_V_LEVEL_OF(rv) (RL_V_LEVEL - (rv))

/* The default policy's level @id, a constant of the program. */
#define LVL(id) RL_LVL(&rl_cfg, id)

/* Is level @id of the default policy on for the family @fam (RL_LVL_ON4, RL_LVL_ON6)? */
static __always_inline int lvl_on(int id, __u32 fam)
{
	return LVL(id)->on & fam;
}

/* Is any level above the source on, for family @fam (the admission cap apart)? */
static __always_inline int levels_on(__u32 fam)
{
	return lvl_on(RL_LVL_PREFIX, fam) || lvl_on(RL_LVL_IFACE, fam);
}

/*
 * The key of level @l's state for source @src (unmasked, IPv4 as
 * IPv4-mapped): the source masked by the level's prefix (the previous
 * configuration's masks when @prev), or nothing for the levels of the whole
 * interface.
 */
static __always_inline void level_key_as(struct rl_agg_key *k, const struct rl_level *l, __u32 id,
					 const struct rl_key *src, __u32 gen, __u16 slot, int prev)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->gen = gen;
	k->slot = slot;
	k->level = (__u8)id;
	if (id != RL_LVL_PREFIX)
		return;
	if (!src->addr[0] && !src->addr[1] && src->addr[2] == bpf_htonl(0xffff)) {
		k->src.addr[2] = bpf_htonl(0xffff);
		k->src.addr[3] = src->addr[3] & (prev ? l->prev_mask4 : l->mask4);
		return;
	}
	for (int i = 0; i < 4; i++)
		k->src.addr[i] = src->addr[i] & (prev ? l->prev_mask6[i] : l->mask6[i]);
}

static __always_inline void level_key(struct rl_agg_key *k, const struct rl_level *l, __u32 id,
				      const struct rl_key *src, __u32 gen, __u16 slot)
{
	level_key_as(k, l, id, src, gen, slot, 0);
}

/*
 * Level @id of the default policy (@rule RL_RULE_SLOTS) or of limit rule
 * @rule (its index in rl_rules.r[]). Global functions take the level as
 * these indices: their pointer arguments must be writable memory, and the
 * configuration is read-only.
 */
static __always_inline const struct rl_level *level_of(__u32 id, __u32 rule)
{
	if (id < 1 || id > RL_LVL_N)
		return NULL;
	if (rule >= RL_RULE_SLOTS)
		return &rl_cfg.lvl[id - 1];
	/* Bounded before the address is computed, not after (the verifier's view). */
	asm volatile("" : "+r"(rule));
	if (rule >= RL_RULE_SLOTS)
		return NULL;
	return &rl_rules.r[rule].cfg.lvl[id - 1];
}

/*
 * Make the state of level @k->level of the default policy or of rule @rule
 * under key @k for source @src (IPv4 as IPv4-mapped; anything for the
 * levels of the whole interface): carried over from the previous
 * generation when the level says so and that state is there, fresh
 * otherwise. 0 when it is there (made, or made first by another CPU), -1
 * when it cannot be made. A global function, verified once for any level
 * and rule: the lookup of the previous generation and the carry are rare (a
 * new aggregate) and long.
 */
__noinline int level_new(struct rl_kcounters *cnt, const struct rl_agg_key *k,
			 const struct rl_key *src, __u32 rule, __u64 now)
{
	const struct rl_level *l;
	struct rl_agg_key pk;
	__u64 st, *prev;
	int err;

	if (!cnt || !k || !src)
		return -1;
	l = level_of(k->level, rule);
	if (!l)
		return -1;
	st = rl_initial_state(&l->params, now);
	if (l->has_prev) {
		level_key_as(&pk, l, k->level, src, k->gen - 1, k->slot, 1);
		prev = bpf_map_lookup_elem(&rl_agg, &pk);
		if (prev)
			st = rl_level_carry(l, *(volatile __u64 *)prev, now);
	}
	err = bpf_map_update_elem(&rl_agg, k, &st, BPF_NOEXIST);
	if (!err) {
		cnt->agg_new++;
		return 0;
	}
	return err == -17 /* EEXIST: another CPU made it first */ ? 0 : -1;
}

/* What level_do() does with a level's state. */
enum {
	LVL_OP_CHECK = 0, /* the verdict of a packet, without a write */
	LVL_OP_STEP = 1, /* the verdict, charged when within the limit (exact, as a source's) */
	LVL_OP_CHARGE = 2, /* charge a packet its source passed, past the limit if need be */
};
#define LVL_WHICH(op, id, rule) ((op) << 16 | (rule) << 8 | (id))

/*
 * The step of a packet of @len bytes at @now on state @st of level
 * LVL_WHICH()'s id and rule: rl_step_at(), the next state in *@next. A
 * global function of its own for the algorithms' 128-bit arithmetic, so that
 * the compare-and-swap loop around it keeps a small frame (every chain of
 * calls has 512 bytes of stack), verified once for every level and rule
 * (the level's parameters are read, not constants).
 */
__noinline int level_next(__u64 st, __u32 which, __u64 len, __u64 now, __u64 *next)
{
	const struct rl_level *l = level_of(which & 0xff, (which >> 8) & 0xff);

	if (!l || !next)
		return -1;
	return rl_step_at(&l->params, st, now, rl_tick(&l->params, now), rl_level_cost(l, len),
			  next);
}

/*
 * The state past the limit of a packet charged after its step refused it
 * (rl_level_charge()'s second half): apart from level_next(), so that
 * neither frame holds both.
 */
__noinline int level_over(__u64 st, __u32 which, __u64 len, __u64 now, __u64 *next)
{
	const struct rl_level *l = level_of(which & 0xff, (which >> 8) & 0xff);

	if (!l || !next)
		return -1;
	rl_level_over(l, st, rl_tick(&l->params, now), rl_level_cost(l, len), next);
	return 0;
}

/*
 * One packet of @len bytes at @now from @src (unmasked; IPv4 as
 * IPv4-mapped) against level LVL_WHICH()'s id of the default policy or of
 * rule index rule, its state found in rl_agg or made (level_new()), as its
 * op says:
 *	LVL_OP_CHECK	1 within the limit, 0 over it; nothing written;
 *	LVL_OP_STEP	as step_state() does for a source: 1 within the limit
 *			and charged by compare-and-swap, 0 over it (nothing
 *			written), RL_CAS_LOST after RL_CAS_TRIES lost races;
 *	LVL_OP_CHARGE	the step's state, or over the limit level_over()'s
 *			(counted in agg_overdraft); 1, or 0 left uncharged after
 *			RL_CAS_TRIES lost races (agg_failed).
 * -1 when the state cannot be made (agg_failed). A global function: the
 * key and the state take no room in its callers' frames.
 */
__noinline int level_do(struct rl_kcounters *cnt, const struct rl_key *src, __u32 which, __u64 len,
			__u64 now)
{
	__u32 id = which & 0xff, rule = (which >> 8) & 0xff, op = which >> 16;
	const struct rl_level *l = level_of(id, rule);
	__u64 *p, old, next;
	struct rl_agg_key k;
	int i, ok;

	if (!cnt || !src || !l)
		return -1;
	if (rule < RL_RULE_SLOTS)
		level_key(&k, l, id, src, rl_rules.r[rule].gen, rl_rules.r[rule].slot);
	else
		level_key(&k, l, id, src, rl_cfg.gen, RL_AGG_DEFAULT);
	p = bpf_map_lookup_elem(&rl_agg, &k);
	if (!p) {
		if (!level_new(cnt, &k, src, rule, now))
			p = bpf_map_lookup_elem(&rl_agg, &k);
		if (!p) {
			cnt->agg_failed++;
			return -1;
		}
	}
	for (i = 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)p;
		ok = level_next(old, which, len, now, &next);
		if (op == LVL_OP_CHECK || (op == LVL_OP_STEP && ok != 1))
			return ok;
		if (!ok)
			level_over(old, which, len, now, &next);
		if (next == old || __sync_val_compare_and_swap(p, old, next) == old) {
			if (!ok)
				cnt->agg_overdraft++;
			return 1;
		}
		cnt->cas_retries++;
	}
	if (op == LVL_OP_STEP) {
		cnt->cas_exhausted++;
		return RL_CAS_LOST;
	}
	cnt->agg_failed++;
	return 0;
}

/*
 * level_do() for a level of the default policy, @l a constant of the
 * program (LVL(@id)): the same lookup, step and compare-and-swap in line,
 * with the level's algorithm known to the verifier, so that only its code
 * is there and no call is made but level_new() on a miss. What the packet
 * path of the default policy's levels runs (bpf/aggregate.h).
 */
static __always_inline int level_run(struct rl_kcounters *cnt, const struct rl_level *l, __u32 id,
				     const struct rl_key *src, __u32 op, __u64 len, __u64 now)
{
	__u64 *p, old, next, tk, cost;
	struct rl_agg_key k;
	int ok;

	level_key(&k, l, id, src, rl_cfg.gen, RL_AGG_DEFAULT);
	p = bpf_map_lookup_elem(&rl_agg, &k);
	if (!p) {
		if (!level_new(cnt, &k, src, RL_RULE_SLOTS, now))
			p = bpf_map_lookup_elem(&rl_agg, &k);
		if (!p) {
			cnt->agg_failed++;
			return -1;
		}
	}
	tk = rl_tick(&l->params, now);
	cost = rl_level_cost(l, len);
	if (op == LVL_OP_CHECK)
		return rl_step_at(&l->params, *(volatile __u64 *)p, now, tk, cost, &next);
	for (int i = 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)p;
		ok = rl_level_charge(l, old, now, tk, cost, &next);
		if (next == old || __sync_val_compare_and_swap(p, old, next) == old) {
			if (!ok)
				cnt->agg_overdraft++;
			return 1;
		}
		cnt->cas_retries++;
	}
	cnt->agg_failed++;
	return 0;
}

/*
 * Check the prefix and interface levels of @cfg (the default policy's,
 * @rule RL_RULE_SLOTS, or limit rule index @rule's) for a packet of @len
 * bytes from @src at @now, without a write: 0 when each passes,
 * RL_V_REFUSED(id) for the first that refuses it, -1 when a state cannot be
 * made.
 */
static __always_inline int levels_check(struct rl_kcounters *cnt, const struct rl_config *cfg,
					__u32 fam, const struct rl_key *src, __u32 rule, __u64 len,
					__u64 now)
{
	int v;

	for (__u32 id = RL_LVL_PREFIX; id <= RL_LVL_IFACE; id++) {
		if (!(RL_LVL(cfg, id)->on & fam))
			continue;
		v = level_do(cnt, src, LVL_WHICH(LVL_OP_CHECK, id, rule), len, now);
		if (v < 0)
			return -1;
		if (!v)
			return RL_V_REFUSED(id);
	}
	return 0;
}

/*
 * Charge the levels levels_check() passed, for a packet its source passed
 * too: each state looked up again (made again if the table forgot it
 * meanwhile) and charged (LVL_OP_CHARGE).
 */
static __always_inline void levels_charge(struct rl_kcounters *cnt, const struct rl_config *cfg,
					  __u32 fam, const struct rl_key *src, __u32 rule,
					  __u64 len, __u64 now)
{
	for (__u32 id = RL_LVL_PREFIX; id <= RL_LVL_IFACE; id++)
		if (RL_LVL(cfg, id)->on & fam)
			level_do(cnt, src, LVL_WHICH(LVL_OP_CHARGE, id, rule), len, now);
}

#endif /* RL_BPF_LEVEL_H */
