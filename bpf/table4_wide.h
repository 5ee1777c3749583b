/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPv4 sources in rl_wide4 (RL_TABLE4_WIDE): the sets of rl_sets4 in the
 * wide layout of include/rl_sa.h, for the policies whose state does not fit
 * a slot word (rl_sa_check()). Four ways of an identity word, whose pending
 * bit is a lock, and a whole state word. The hit's first round in line
 * (wide_hit4()), the rest out of line (limit_wide4()), the insertion
 * (wide_miss4()) and the sync agent's charge (charge_wide4()).
 *
 * Includes state.h, carry.h, clock.h, sync.h, maps.h and include/ headers
 * only.
 */
#ifndef RL_BPF_TABLE4_WIDE_H
#define RL_BPF_TABLE4_WIDE_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa.h"
#include "maps.h"
#include "clock.h"
#include "state.h"
#include "carry.h"
#include "sync.h"

/*
 * One round on way @i of @set, whose identity word was read as @w (used,
 * unlocked): its state, then over the limit if the identity word still
 * reads @w, or within it if the lock from @w is taken, in which case the
 * next state is stored and the way released with its version moved on.
 * As sa_hit4(): 1, 0, or RL_ROUND_LOST when another CPU changed the way.
 */
static __always_inline int wide_round(struct rl_kcounters *cnt, struct rl_sa_set *set, int i,
				      __u64 w, __u64 now, __u64 tk, __u64 cost)
{
	__u64 st = *(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i], next;

	if (!rl_step_at(&rl_cfg.params, st, now, tk, cost, &next)) {
		if (*(volatile __u64 *)&set->w[i] == w)
			return 0;
	} else if (__sync_val_compare_and_swap(&set->w[i], w, w | RL_SA_PEND) == w) {
		*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i] = next;
		/* Only the holder writes a locked word: the CAS orders, it cannot fail. */
		__sync_val_compare_and_swap(&set->w[i], w | RL_SA_PEND,
					    rl_sa_wide_next(w, rl_sa_bits) | RL_SA_SEEN);
		return 1;
	}
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

/* The way of rl_wide4's @set whose identity is @id, and its identity word in *w; -1 if none. */
static __always_inline int wide_find(struct rl_sa_set *set, __u64 id, __u64 *w)
{
	__u64 idm = rl_sa_id_mask(rl_sa_bits);
	int i;

	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		*w = *(volatile __u64 *)&set->w[i];
		if ((*w & idm) == id)
			return i;
	}
	return -1;
}

/*
 * Reads of a locked identity word before a round counts as lost: a holder
 * keeps the lock for one store and one compare-and-swap, far shorter than
 * the RL_CAS_TRIES rounds a waiting CPU would otherwise use up in a row.
 */
#define RL_WIDE_SPIN 64

/*
 * The identity word of way @i of @set read as @w, read again while it is
 * locked (bounded). A global function, called only on a locked word: in
 * line, its loop in each of limit_wide4()'s rounds is more states than the
 * verifier explores.
 */
__noinline __u64 wide_unlocked(struct rl_sa_set *set, int i, __u64 w)
{
	if (!set || i < 0 || i >= RL_SA_WIDE_WAYS)
		return w;
	for (int j = 0; j < RL_WIDE_SPIN && (w & RL_SA_PEND); j++)
		w = *(volatile __u64 *)&set->w[i];
	return w;
}

/* The first round of limit_wide4(), in line in the main program, as sa_hit4(). */
static __always_inline int wide_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	struct rl_sa_set *set;
	__u64 id, w = 0;
	__u32 idx;
	int i, ret;

	set = set4(&rl_wide4, addr, &idx, &id);
	if (!set) /* cannot happen; limit_wide4() counts it */
		return RL_ROUND_LOST;
	i = wide_find(set, id, &w);
	if (i < 0 || i >= RL_SA_WIDE_WAYS)
		return RL_NOT_HELD;
	if (w & RL_SA_PEND) { /* locked by another CPU */
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	ret = wide_round(cnt, set, i, w, now, tick(cnt, now), cost);
	if (ret == 1)
		sync_slot4(cnt, &idx, i, id, cost);
	return ret;
}

/* The arguments of a round of limit_wide4() (one pointer: a call takes five at most). */
struct wide_round_arg {
	__u64 id, now, tk, cost;
	__u32 idx;
};

/*
 * One round of limit_wide4() on @set for the source and packet of @a: the
 * source's way (waited for while locked), then wide_round(): 1, 0,
 * RL_NOT_HELD, or RL_ROUND_LOST. A global function of its own: the
 * verifier checks one round once, not once for each of limit_wide4()'s
 * RL_CAS_TRIES.
 */
__noinline int wide_round4(struct rl_kcounters *cnt, struct rl_sa_set *set,
			   struct wide_round_arg *a)
{
	__u64 w = 0;
	__u32 idx;
	int i, ret;

	if (!cnt || !set || !a)
		return -1;
	i = wide_find(set, a->id, &w);
	if (i < 0 || i >= RL_SA_WIDE_WAYS)
		return RL_NOT_HELD;
	if (w & RL_SA_PEND)
		w = wide_unlocked(set, i, w);
	if ((w & RL_SA_PEND) || (w & rl_sa_id_mask(rl_sa_bits)) != a->id) {
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	ret = wide_round(cnt, set, i, w, a->now, a->tk, a->cost);
	if (ret == 1) {
		idx = a->idx;
		sync_slot4(cnt, &idx, i, a->id, a->cost);
	}
	return ret;
}

/*
 * limit_sa4() for rl_wide4: at most RL_CAS_TRIES rounds (less @lost), each
 * a wide_round4() on the source's way; RL_NOT_HELD on a miss.
 */
__noinline int limit_wide4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost, int lost)
{
	struct wide_round_arg a;
	struct rl_sa_set *set;
	int t, ret;

	if (!cnt)
		return -1;
	set = set4(&rl_wide4, addr, &a.idx, &a.id);
	if (!set) { /* cannot happen: idx < max_entries */
		cnt->insert_failed++;
		return -1;
	}
	a.now = now;
	a.cost = cost;
	a.tk = tick(cnt, now);
	for (t = lost ? 1 : 0; t < RL_CAS_TRIES; t++) {
		ret = wide_round4(cnt, set, &a);
		if (ret != RL_ROUND_LOST)
			return ret;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/*
 * wide_miss4() after the victim was chosen: lock way @a->victim of @set
 * (read as @a->vw), look for a twin, store the first state and release.
 * A global function of its own: the verifier checks it once with the
 * victim any of the ways, not once for each way the choice may pick.
 */
__noinline int wide_claim4(struct rl_kcounters *cnt, struct rl_sa_set *set, struct claim4_arg *a)
{
	__u64 idm = rl_sa_id_mask(rl_sa_bits), id, vw, w, next, st, lock;
	int i, victim, pass;
	__u32 idx;

	if (!cnt || !set || !a)
		return -1;
	victim = a->victim;
	id = a->id;
	vw = a->vw;
	if (victim < 0 || victim >= RL_SA_WIDE_WAYS)
		return RL_RETRY_LOOKUP;
	/* The way's version goes on with the new source: a reader of the old one sees a change. */
	lock = id | RL_SA_PEND | (vw & rl_sa_state_mask(rl_sa_bits));
	if (__sync_val_compare_and_swap(&set->w[victim], vw, lock) != vw)
		return RL_RETRY_LOOKUP;
	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		if (i == victim)
			continue;
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) == id)
			break;
	}
	if (i < RL_SA_WIDE_WAYS) {
		/* Another copy is being inserted or is in: ours goes, the way as it was. */
		__sync_val_compare_and_swap(&set->w[victim], lock, vw);
		return RL_RETRY_LOOKUP;
	}
	st = sa_first_state(cnt, a->addr, a->now);
	pass = rl_step_at(&rl_cfg.params, st, a->now, a->tk, a->cost, &next);
	if (!pass)
		next = st;
	*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + victim] = next;
	__sync_val_compare_and_swap(&set->w[victim], lock, rl_sa_wide_next(lock, rl_sa_bits));
	placed(cnt, vw & RL_SA_USED, vw & RL_SA_SEEN);
	if (pass) {
		idx = a->idx;
		sync_slot4(cnt, &idx, victim, id, a->cost);
	}
	return pass;
}

/*
 * sa_miss4() for rl_wide4: the victim an empty way, else the unlocked one
 * not seen again, then seen again, whose state is least ahead of the reference; lock it from the identity
 * word read (a failure: RL_RETRY_LOOKUP), look for another copy of the
 * source in the other ways (one: restore the word, RL_RETRY_LOOKUP), then
 * store the first state and release the way under the source's identity.
 * A way released without its state written gets its old word back, as a
 * reader that saw it expects.
 */
__noinline int wide_miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	__s64 best = 0x7fffffffffffffffLL;
	struct claim4_arg a = {};
	struct rl_sa_set *set;
	int i, victim = -1;
	__u64 ref, w;

	if (!cnt)
		return -1;
	set = set4(&rl_wide4, addr, &a.idx, &a.id);
	if (!set)
		return -1;
	ref = claim4_packet(&a, cnt, addr, now, cost);
	for (i = 0; i < RL_SA_WIDE_WAYS; i++) {
		__s64 ahead;

		w = *(volatile __u64 *)&set->w[i];
		if (!(w & RL_SA_USED)) { /* empty: never used, or its source deleted */
			victim = i;
			a.vw = w;
			break;
		}
		if (w & RL_SA_PEND)
			continue;
		ahead = (__s64)(*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i] - ref);
		/* Sources seen again go last (RL_SA_SEEN_RANK, include/rl_sa.h). */
		if (w & RL_SA_SEEN)
			ahead += RL_SA_SEEN_RANK;
		if (ahead < best) {
			best = ahead;
			victim = i;
			a.vw = w;
		}
	}
	a.victim = victim;
	return wide_claim4(cnt, set, &a);
}

/*
 * Fleet sync's charge (bpf/charge.h): charge_sa4() for rl_wide4, the charge
 * in the lock of the source's way, as wide_round() stores a pass; a full
 * bucket or window (nothing to store) when the identity word still reads as
 * it did around the state.
 */
__noinline int charge_wide4(__be32 addr, __u64 now, __u64 units)
{
	__u64 id, idm = rl_sa_id_mask(rl_sa_bits), w, st, next;
	struct rl_sa_set *set;
	__u32 idx;
	int i, t;

	set = set4(&rl_wide4, addr, &idx, &id);
	if (!set)
		return 0;
	i = wide_find(set, id, &w);
	if (i < 0 || i >= RL_SA_WIDE_WAYS)
		return 0;
	for (t = 0; t < RL_CAS_TRIES; t++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) != id)
			return 0; /* evicted meanwhile */
		if (w & RL_SA_PEND)
			continue;
		st = *(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i];
		if (!rl_charge(&rl_cfg.params, st, now, units, &next)) {
			if (*(volatile __u64 *)&set->w[i] == w)
				return 1;
			continue;
		}
		if (__sync_val_compare_and_swap(&set->w[i], w, w | RL_SA_PEND) != w)
			continue;
		*(volatile __u64 *)&set->w[RL_SA_WIDE_WAYS + i] = next;
		__sync_val_compare_and_swap(&set->w[i], w | RL_SA_PEND,
					    rl_sa_wide_next(w, rl_sa_bits));
		return 1;
	}
	return -1;
}

#endif /* RL_BPF_TABLE4_WIDE_H */
