/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A new source's first state: carried over from the previous generation
 * (rl_cfg.has_prev: set loaded this program over another policy's state),
 * from whichever IPv4 table the previous policy used (rl_cfg.prev_table4),
 * or fresh. The lookups of the previous generation in each table live here
 * rather than with the tables, since every table's insertion reads all
 * three.
 *
 * Includes maps.h and include/ headers only.
 */
#ifndef RL_BPF_CARRY_H
#define RL_BPF_CARRY_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa.h"
#include "maps.h"

/*
 * A new source's first packet: its state carried over from the previous
 * generation (@prev, when it was there) or fresh, then stepped. Returns the
 * verdict of rl_step() and the state to insert in *val.
 */
static __always_inline int first_step(struct rl_kcounters *cnt, const __u64 *prev, __u64 now,
				      __u64 cost, __u64 *val)
{
	__u64 v, next;
	int pass;

	if (prev) {
		cnt->carried++;
		v = rl_carry_state(&rl_cfg, *prev, now);
	} else {
		v = rl_initial_state(&rl_cfg.params, now);
	}
	pass = rl_step(&rl_cfg.params, v, now, cost, &next);
	*val = pass ? next : v;
	return pass;
}

/*
 * The set of IPv4 source @addr (masked by mask4) under the previous
 * generation in the set table @map (rl_sets4 or rl_wide4), and its identity.
 */
static __always_inline struct rl_sa_set *prev_set(void *map, __be32 addr, __u64 *id)
{
	__u32 bits = rl_sa_bits,
	      h = rl_sa_hash(bpf_ntohl(addr & rl_cfg.prev_mask4), rl_cfg.gen - 1, rl_cfg.sa_key);
	__u32 idx = h & ((1U << bits) - 1);

	*id = rl_sa_id(h, rl_cfg.gen - 1, bits);
	return bpf_map_lookup_elem(map, &idx);
}

/*
 * The same source's previous state in rl_sets4, read back in the previous
 * parameters' terms: 1 and *st when it is there. A pending copy is not in
 * yet: nothing to carry.
 */
static __always_inline int sa_prev(__be32 addr, __u64 now, __u64 *st)
{
	__u64 id, idm = rl_sa_id_mask(rl_sa_bits), w;
	struct rl_sa_set *set = prev_set(&rl_sets4, addr, &id);
	__u32 i;

	if (!set)
		return 0;
	for (i = 0; i < RL_SA_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id && !(w & RL_SA_PEND)) {
			*st = rl_sa_get(w, rl_sa_ref(&rl_cfg.prev, now), rl_sa_bits);
			return 1;
		}
	}
	return 0;
}

/* The same source's previous state in rl_state4. */
static __always_inline __u64 *lru_prev(__be32 addr)
{
	struct rl_state_key4 pk = { .addr = addr & rl_cfg.prev_mask4, .gen = rl_cfg.gen - 1 };

	return bpf_map_lookup_elem(&rl_state4, &pk);
}

/*
 * The same source's previous state in rl_wide4: 1 and *st when it is there,
 * read between two reads of its identity word that agree. A way locked or
 * changed meanwhile is being inserted, moved or evicted: nothing to carry.
 */
static __always_inline int wide_prev(__be32 addr, __u64 *st)
{
	__u64 id, idm = rl_sa_id_mask(rl_sa_bits), w;
	struct rl_sa_set *set = prev_set(&rl_wide4, addr, &id);
	__u32 i;

	if (!set)
		return 0;
	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id && !(w & RL_SA_PEND)) {
			*st = *(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i];
			return *(volatile __u64 *)&set->w[i] == w;
		}
	}
	return 0;
}

/* An IPv4 source's state in the previous generation, from the table it was in: 1 and *st. */
static __always_inline int prev_state4(__be32 addr, __u64 now, __u64 *st)
{
	__u64 *p;

	if (rl_cfg.prev_table4 == RL_TABLE4_LRU) {
		p = lru_prev(addr);
		if (!p)
			return 0;
		*st = *p;
		return 1;
	}
	if (rl_cfg.prev_table4 == RL_TABLE4_WIDE)
		return wide_prev(addr, st);
	return sa_prev(addr, now, st);
}

/*
 * The state of an IPv4 source first seen at @now in a set table (rl_sets4
 * or rl_wide4): carried over from the previous generation, from whichever
 * table the previous policy used, or fresh.
 */
static __always_inline __u64 sa_first_state(struct rl_kcounters *cnt, __be32 addr, __u64 now)
{
	__u64 w;

	if (!cnt)
		return 0;
	if (!rl_cfg.has_prev || !prev_state4(addr, now, &w))
		return rl_initial_state(&rl_cfg.params, now);
	cnt->carried++;
	return rl_carry_state(&rl_cfg, w, now);
}

#endif /* RL_BPF_CARRY_H */
