/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPv4 sources in the set-associative table rl_sets4 (RL_TABLE4_SA, the
 * default): one 64-bit slot word per source, identity and state together
 * (include/rl_sa.h), so that every change is one compare-and-swap. The
 * hit's first round in line (sa_hit4()), the rest out of line (limit_sa4()),
 * the insertion (sa_miss4()) and the sync agent's charge (charge_sa4()). The
 * set's own steps (find, victim, twin) are bpf/sa_set.h's, shared with the
 * bench's study. A pass is counted for fleet sync in the slot's counter
 * word (bpf/sync.h, sync_slot4()), when sync counting is compiled in.
 *
 * Includes sa_set.h, state.h, carry.h, clock.h, sync.h, maps.h and
 * include/ headers only.
 */
#ifndef RL_BPF_TABLE4_SA_H
#define RL_BPF_TABLE4_SA_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa.h"
#include "maps.h"
#include "clock.h"
#include "state.h"
#include "carry.h"
#include "sa_set.h"
#include "sync.h"

/* The arguments of a round of limit_sa4() (one pointer: a call takes five at most). */
struct sa4_round_arg {
	__u64 id, ref, now, tk, cost;
	__u32 idx;
};

/*
 * A round on slot @i of set @idx (@set), whose word @w holds the source of
 * identity @id: RL_ROUND_LOST while another CPU inserts it; else its state
 * (relative to @ref) stepped at @now (tick @tk) for @cost, a pass stored
 * with one compare-and-swap of the word read. 1, 0, or RL_ROUND_LOST when
 * another CPU changed the word first. sa4_round()'s and sa_hit4()'s.
 */
static __always_inline int round4(struct rl_kcounters *cnt, struct rl_sa_set *set, __u32 idx, int i,
				  __u64 w, __u64 id, __u64 now, __u64 tk, __u64 ref, __u64 cost)
{
	__u32 bits = rl_sa_bits;
	__u64 next;

	if (w & RL_SA_PEND) { /* being inserted by another CPU */
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	if (!rl_step_at(&rl_cfg.params, rl_sa_get(w, ref, bits), now, tk, cost, &next))
		return 0;
	if (__sync_val_compare_and_swap(&set->w[i], w,
					id | RL_SA_SEEN | (next & rl_sa_state_mask(bits))) == w) {
		sync_slot4(cnt, &idx, i, id, cost);
		return 1;
	}
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

/*
 * One round of limit_sa4() on @set for the source and packet of @a: 1, 0,
 * RL_NOT_HELD, or RL_ROUND_LOST (another CPU changed the slot, or is
 * inserting the source). A global function of its own: the verifier checks
 * one round once, not once for each of limit_sa4()'s RL_CAS_TRIES.
 */
__noinline int sa4_round(struct rl_kcounters *cnt, struct rl_sa_set *set, struct sa4_round_arg *a)
{
	__u64 idm = rl_sa_id_mask(rl_sa_bits), w;
	int hit;

	if (!cnt || !set || !a)
		return -1;
	SA_FIND(set, a->id, idm, hit, w);
	if (hit < 0)
		return RL_NOT_HELD;
	return round4(cnt, set, a->idx, hit, w, a->id, a->now, a->tk, a->ref, a->cost);
}

/*
 * 1: within the limit; 0: over it; -1: the source could not be tracked.
 * The protocol of bench/bpf/bench_sa.bpf.c (its comment proves it exact):
 * hit: the first slot whose used, generation and tag bits match is the
 * source; a pass CASes (id | seen again | next state) over the word read, a
 * failed CAS starts over. Miss: the victim is an empty slot, else the one least ahead
 * of the clock (never a pending one); claim it as pending, re-read the other
 * slots (another CPU inserting the same source: undo and start over), then
 * publish. At most RL_CAS_TRIES rounds (less @lost, the rounds sa_hit4()
 * used), then the packet counts as cas_exhausted and is dropped.
 *
 * A global function: the verifier checks it once, whatever its callers
 * (the untagged path after sa_hit4(), and slow_path()); inlined twice, its
 * retry loop over eight slots is more paths than the verifier explores.
 */
__noinline int limit_sa4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost, int lost)
{
	struct sa4_round_arg a;
	struct rl_sa_set *set;
	int t, ret;

	if (!cnt)
		return -1;
	set = set4(&rl_sets4, addr, &a.idx, &a.id);
	if (!set) { /* cannot happen: idx < max_entries */
		cnt->insert_failed++;
		return -1;
	}
	a.now = now;
	a.cost = cost;
	a.tk = tick(cnt, now);
	a.ref = rl_sa_ref_at(&rl_cfg.params, a.tk);
	for (t = lost ? 1 : 0; t < RL_CAS_TRIES; t++) {
		ret = sa4_round(cnt, set, &a);
		if (ret != RL_ROUND_LOST)
			return ret;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/*
 * The first round of limit_sa4(), in line in the main program, as
 * lru_hit4() for rl_state4: as limit_sa4(), or RL_ROUND_LOST, after which
 * limit_sa4() goes on with one round fewer.
 */
static __always_inline int sa_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	__u64 idm = rl_sa_id_mask(rl_sa_bits), id, w = 0, tk;
	struct rl_sa_set *set;
	__u32 idx;
	int i;

	set = set4(&rl_sets4, addr, &idx, &id);
	if (!set) /* cannot happen: idx < max_entries; limit_sa4() counts it */
		return RL_ROUND_LOST;
	SA_FIND(set, id, idm, i, w);
	if (i < 0)
		return RL_NOT_HELD;
	tk = tick(cnt, now);
	return round4(cnt, set, idx, i, w, id, now, tk, rl_sa_ref_at(&rl_cfg.params, tk), cost);
}

/*
 * sa_miss4() after the victim was chosen: claim slot @a->victim of @set
 * (read as @a->vw) as pending, check for a twin, publish the first state.
 * A global function of its own: the verifier checks it once with the victim
 * any of the ways, not once for each way SA_VICTIM() may pick.
 */
__noinline int sa4_claim(struct rl_kcounters *cnt, struct rl_sa_set *set, struct claim4_arg *a)
{
	__u32 bits = rl_sa_bits, idx;
	__u64 idm = rl_sa_id_mask(bits), sm = rl_sa_state_mask(bits), id, vw, next, st;
	int victim, twin, pass;

	if (!cnt || !set || !a)
		return -1;
	victim = a->victim;
	id = a->id;
	vw = a->vw;
	if (victim < 0 || victim >= RL_SA_WAYS)
		return RL_RETRY_LOOKUP;
	if (__sync_val_compare_and_swap(&set->w[victim], vw, id | RL_SA_PEND) != vw)
		return RL_RETRY_LOOKUP;
	SA_TWIN(set, victim, id, idm, twin);
	if (twin) {
		/* Another copy is being inserted or is in: ours goes. */
		__sync_val_compare_and_swap(&set->w[victim], id | RL_SA_PEND, 0);
		return RL_RETRY_LOOKUP;
	}
	st = sa_first_state(cnt, a->addr, a->now);
	pass = rl_step_at(&rl_cfg.params, st, a->now, a->tk, a->cost, &next);
	if (!pass)
		next = st;
	/* Only this CPU writes a pending word: the CAS orders, it cannot fail. */
	__sync_val_compare_and_swap(&set->w[victim], id | RL_SA_PEND, id | (next & sm));
	placed(cnt, vw, vw & RL_SA_SEEN);
	if (pass) {
		idx = a->idx;
		sync_slot4(cnt, &idx, victim, id, a->cost);
	}
	return pass;
}

/*
 * One attempt at inserting a source its set does not hold: 1 or 0 as
 * limit_sa4() with the source published, RL_RETRY_LOOKUP when another CPU
 * changed the set first (limit_v4() then starts over). A global function of
 * its own, so that the verifier checks it once rather than in each of
 * limit_sa4()'s retries: 100 ms of verification per load otherwise.
 */
__noinline int sa_miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	__u32 bits = rl_sa_bits;
	struct claim4_arg a;
	struct rl_sa_set *set;
	__u64 ref;
	int victim;

	if (!cnt)
		return -1;
	set = set4(&rl_sets4, addr, &a.idx, &a.id);
	if (!set)
		return -1;
	ref = claim4_packet(&a, cnt, addr, now, cost);
	SA_VICTIM(set, ref, bits, victim, a.vw);
	a.victim = victim;
	return sa4_claim(cnt, set, &a);
}

/*
 * Fleet sync's charge (bpf/charge.h) of @units to IPv4 source @addr in
 * rl_sets4: as limit_sa4()'s hit, a compare-and-swap of the slot word over
 * the word read. 1: charged (or already full, as charge_one() counts it); 0:
 * no slot (evicted or never seen): nothing to charge; -1: RL_CAS_TRIES races
 * lost, as a packet gives up (not RL_SYNC_CAS_TRIES: with the slot's
 * read-back in each retry the window algorithms pass the verifier's million
 * instructions). A global function, as limit_sa4(): inlined in
 * charge_one()'s bpf_loop() callback, it is more paths than the verifier
 * explores.
 */
__noinline int charge_sa4(__be32 addr, __u64 now, __u64 units)
{
	__u32 bits = rl_sa_bits, idx;
	__u64 idm = rl_sa_id_mask(bits), sm = rl_sa_state_mask(bits);
	__u64 ref = rl_sa_ref(&rl_cfg.params, now), id, w, next;
	struct rl_sa_set *set;
	int i, t;

	set = set4(&rl_sets4, addr, &idx, &id);
	if (!set)
		return 0;
	/* The slot once; then retries on it alone (fewer paths for the verifier). */
	SA_FIND(set, id, idm, i, w);
	if (i < 0)
		return 0;
	for (t = 0; t < RL_CAS_TRIES; t++) {
		w = *(volatile __u64 *)&set->w[i];
		if ((w & idm) != id)
			return 0; /* evicted meanwhile */
		if (w & RL_SA_PEND) /* being inserted by the packet path */
			continue;
		/* As charge_one() on rl_state4: a full bucket or window counts as charged. */
		if (!rl_charge(&rl_cfg.params, rl_sa_get(w, ref, bits), now, units, &next) ||
		    __sync_val_compare_and_swap(&set->w[i], w, (w & ~sm) | (next & sm)) == w)
			return 1;
	}
	return -1;
}

#endif /* RL_BPF_TABLE4_SA_H */
