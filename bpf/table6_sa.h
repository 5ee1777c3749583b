/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPv6 sources in the set-associative table rl_sets6 (include/rl_sa6.h):
 * four ways of an identity word (whose lock guards the others), a whole
 * state word and the masked source. The hit's first round in line in the
 * main program (sa6_hit()), the rest out of line (limit_sa6()), the
 * insertion (sa6_miss()), a new source's state carried from the previous
 * generation (sa6_prev()), fleet sync's count of a pass (count6()) and its
 * charge (charge_sa6()). An IPv4-mapped source is an IPv4 one and never
 * comes here.
 *
 * Includes state.h, clock.h, sync.h, maps.h and include/ headers only.
 */
#ifndef RL_BPF_TABLE6_SA_H
#define RL_BPF_TABLE6_SA_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa6.h"
#include "maps.h"
#include "clock.h"
#include "sync.h"
#include "state.h"

/* The two words rl_sets6 keeps of a key's four (include/rl_sa6.h). */
static __always_inline void words6(__u32 a0, __u32 a1, __u32 a2, __u32 a3, __u64 *k0, __u64 *k1)
{
	*k0 = (__u64)a1 << 32 | a0;
	*k1 = (__u64)a3 << 32 | a2;
}

/*
 * The key of IPv6 source @src under the masks @m (rl_cfg.mask6 or
 * prev_mask6): masked, but a link-local source whole (rl_key.h).
 */
static __always_inline void key6(const struct rl_key *src, const __u32 *m, __u64 *k0, __u64 *k1)
{
	__u32 a0 = src->addr[0], a1 = src->addr[1], a2 = src->addr[2], a3 = src->addr[3];

	if ((a0 & bpf_htonl(RL_LL_MASK)) != bpf_htonl(RL_LL_PREFIX)) {
		a0 &= m[0];
		a1 &= m[1];
		a2 &= m[2];
		a3 &= m[3];
	}
	words6(a0, a1, a2, a3, k0, k1);
}

/* Is @a0, the first word of an IPv6 source, that of a link-local one (keyed whole)? */
static __always_inline int link_local6(__u32 a0)
{
	return (a0 & bpf_htonl(RL_LL_MASK)) == bpf_htonl(RL_LL_PREFIX);
}

/* The set of key @k0, @k1 in generation @gen, and its identity in *id. */
static __always_inline struct rl_sa6_set *set6(__u64 k0, __u64 k1, __u32 gen, __u64 *id)
{
	__u64 h = rl_sa6_hash(k0, k1, gen, rl_cfg.sa_key);
	__u32 idx = (__u32)h & ((1U << rl_sa6_bits) - 1);

	*id = rl_sa6_id(h, gen);
	return bpf_map_lookup_elem(&rl_sets6, &idx);
}

/*
 * The way of @set that holds the source of identity @id and key @k0, @k1:
 * the first whose identity word matches and is unlocked with that key, and
 * its word in *w; else one whose word matches but is locked (being written:
 * maybe the source), its word in *w; else -1. Only a source's own way can
 * match with its key: a source is never in two ways (sa6_miss()).
 */
static __always_inline int find6(struct rl_sa6_set *set, __u64 id, __u64 k0, __u64 k1, __u64 *w)
{
	int i, locked = -1;
	__u64 v, lw = 0;

	for (i = 0; i < RL_SA6_WAYS; i++) {
		v = *(volatile __u64 *)&set->id[i];
		if ((v & RL_SA6_ID_MASK) != id)
			continue;
		if (v & RL_SA6_LOCK) {
			locked = i;
			lw = v;
			continue;
		}
		if (*(volatile __u64 *)&set->key[2 * i] == k0 &&
		    *(volatile __u64 *)&set->key[2 * i + 1] == k1) {
			*w = v;
			return i;
		}
	}
	*w = lw;
	return locked;
}

/*
 * Release way @i of @set, locked from the identity word @w, after its other
 * words were written: @w's identity with the version moved on, by a plain
 * store. Only the holder writes a locked word, and on x86-64 (TSO) a store
 * is seen after the stores before it, as the kernel's own spin_unlock()
 * relies on; a weakly ordered CPU would need BPF's store-release (Linux
 * 6.15, beyond clang 14), as rl_wide4's reads need its load-acquire. A
 * compare-and-swap here cost a pass about 5 ns (docs/benchmarks.md).
 */
static __always_inline void release6(struct rl_sa6_set *set, int i, __u64 w)
{
	*(volatile __u64 *)&set->id[i] = rl_sa6_next(w);
}

/*
 * One round on way @i of @set, whose identity word was read as @w (used,
 * unlocked, the source's key read after it): the state, then over the limit
 * if the identity word still reads @w, or within it if the lock from @w is
 * taken, in which case the next state is stored and the way released with
 * its version moved on. Either way nothing in the way changed since @w was
 * read, key included: what was read is the source's. 1, 0, or
 * RL_ROUND_LOST when another CPU changed the way.
 */
static __always_inline int round6(struct rl_kcounters *cnt, struct rl_sa6_set *set, int i, __u64 w,
				  __u64 now, __u64 tk, __u64 cost)
{
	__u64 st = *(volatile __u64 *)&set->st[i], next;

	if (!rl_step_at(&rl_cfg.params, st, now, tk, cost, &next)) {
		if (*(volatile __u64 *)&set->id[i] == w)
			return 0;
	} else if (__sync_val_compare_and_swap(&set->id[i], w, w | RL_SA6_LOCK) == w) {
		*(volatile __u64 *)&set->st[i] = next;
		release6(set, i, w | RL_SA6_SEEN);
		return 1;
	}
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

/*
 * The first round of limit_sa6(), in line in the main program, as
 * sa_hit4(), for IPv6 source @a0..@a3 (unmasked, in network order; never a
 * link-local one, which slow_path() takes): 1, 0, RL_NOT_HELD, or
 * RL_ROUND_LOST, after which limit_sa6() goes on with one round fewer.
 * With --prefix6 64 or shorter (masks a constant, so the verifier keeps
 * one branch) the key's second word is 0 and its hash one finalizer.
 */
static __always_inline int sa6_hit(struct rl_kcounters *cnt, __u32 a0, __u32 a1, __u32 a2, __u32 a3,
				   __u64 now, __u64 cost)
{
	struct rl_sa6_set *set;
	__u64 k0, k1, id, w = 0;
	int i;

	if (!rl_cfg.mask6[2] && !rl_cfg.mask6[3])
		words6(a0 & rl_cfg.mask6[0], a1 & rl_cfg.mask6[1], 0, 0, &k0, &k1);
	else
		words6(a0 & rl_cfg.mask6[0], a1 & rl_cfg.mask6[1], a2 & rl_cfg.mask6[2],
		       a3 & rl_cfg.mask6[3], &k0, &k1);
	set = set6(k0, k1, rl_cfg.gen, &id);
	if (!set) /* cannot happen: idx < max_entries; limit_sa6() counts it */
		return RL_ROUND_LOST;
	i = find6(set, id, k0, k1, &w);
	if (i < 0 || i >= RL_SA6_WAYS)
		return RL_NOT_HELD;
	if (w & RL_SA6_LOCK) { /* being written by another CPU */
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	return round6(cnt, set, i, w, now, tick(cnt, now), cost);
}

/*
 * Reads of a locked identity word before a round counts as lost, as
 * RL_WIDE_SPIN for rl_wide4: a holder keeps the lock for one store and one
 * compare-and-swap (an insertion: four stores).
 */
#define RL_SA6_SPIN 64

/*
 * The identity word of way @i of @set, read again while it is locked
 * (bounded). A global function, called only on a locked word, as
 * wide_unlocked().
 */
__noinline __u64 sa6_unlocked(struct rl_sa6_set *set, int i)
{
	__u64 w = 0;

	if (!set || i < 0 || i >= RL_SA6_WAYS)
		return w;
	for (int j = 0; j < RL_SA6_SPIN; j++) {
		w = *(volatile __u64 *)&set->id[i];
		if (!(w & RL_SA6_LOCK))
			break;
	}
	return w;
}

/* The arguments of a round of limit_sa6() (one pointer: a call takes five at most). */
struct sa6_round_arg {
	__u64 id, k0, k1, now, tk, cost;
};

/*
 * One round of limit_sa6() on @set for the source and packet of @a: 1, 0,
 * RL_NOT_HELD, or RL_ROUND_LOST (another CPU changed the way, or held it:
 * then after waiting for the holder, as the way may hold another source
 * now). A global function of its own: the verifier checks one round once,
 * not once for each of limit_sa6()'s RL_CAS_TRIES.
 */
__noinline int sa6_round(struct rl_kcounters *cnt, struct rl_sa6_set *set, struct sa6_round_arg *a)
{
	__u64 w = 0;
	int i;

	if (!cnt || !set || !a)
		return -1;
	i = find6(set, a->id, a->k0, a->k1, &w);
	if (i < 0 || i >= RL_SA6_WAYS)
		return RL_NOT_HELD;
	if (w & RL_SA6_LOCK) {
		sa6_unlocked(set, i);
		cnt->cas_retries++;
		return RL_ROUND_LOST;
	}
	return round6(cnt, set, i, w, a->now, a->tk, a->cost);
}

/*
 * IPv6 source @src (unmasked): 1 within the limit, 0 over it, RL_NOT_HELD
 * when the table does not hold it, RL_CAS_LOST after RL_CAS_TRIES rounds
 * (less @lost, those sa6_hit() used) lost to other CPUs. A global function,
 * as limit_sa4(): the verifier checks it once for its callers (the main
 * program after sa6_hit(), and slow_path()).
 */
__noinline int limit_sa6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 now, __u64 cost,
			 int lost)
{
	struct sa6_round_arg a;
	struct rl_sa6_set *set;
	int t, ret;

	if (!cnt || !src)
		return -1;
	key6(src, rl_cfg.mask6, &a.k0, &a.k1);
	set = set6(a.k0, a.k1, rl_cfg.gen, &a.id);
	if (!set) { /* cannot happen: idx < max_entries */
		cnt->insert_failed++;
		return -1;
	}
	a.now = now;
	a.cost = cost;
	a.tk = tick(cnt, now);
	for (t = lost ? 1 : 0; t < RL_CAS_TRIES; t++) {
		ret = sa6_round(cnt, set, &a);
		if (ret != RL_ROUND_LOST)
			return ret;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

/*
 * The same source's state in the previous generation (rl_cfg.has_prev),
 * keyed by the previous masks: 1 and *st when it is there, read between two
 * reads of its identity word that agree. A way locked or changed meanwhile
 * is being inserted, moved or evicted: nothing to carry.
 */
static __always_inline int sa6_prev(const struct rl_key *src, __u64 *st)
{
	struct rl_sa6_set *set;
	__u64 k0, k1, id, w = 0;
	int i;

	key6(src, rl_cfg.prev_mask6, &k0, &k1);
	set = set6(k0, k1, rl_cfg.gen - 1, &id);
	if (!set)
		return 0;
	i = find6(set, id, k0, k1, &w);
	if (i < 0 || i >= RL_SA6_WAYS || (w & RL_SA6_LOCK))
		return 0;
	*st = *(volatile __u64 *)&set->st[i];
	return *(volatile __u64 *)&set->id[i] == w;
}

/* The arguments of sa6_miss()'s claim (one pointer: a call takes five at most). */
struct sa6_claim_arg {
	__u64 id, k0, k1, vw, now, tk, cost;
	int victim;
};

/*
 * sa6_miss() after the victim was chosen: lock way @a->victim of @set (read
 * as @a->vw), look for a twin, store the key and the first state of @src
 * and release. A global function of its own: the verifier checks it once
 * with the victim any of the ways, not once for each way the choice may
 * pick.
 */
__noinline int sa6_claim(struct rl_kcounters *cnt, struct rl_sa6_set *set, const struct rl_key *src,
			 struct sa6_claim_arg *a)
{
	__u64 id, k0, k1, vw, w, st, next, lock, now;
	int i, victim, pass;

	if (!cnt || !set || !src || !a)
		return -1;
	victim = a->victim;
	id = a->id;
	k0 = a->k0;
	k1 = a->k1;
	vw = a->vw;
	now = a->now;
	if (victim < 0 || victim >= RL_SA6_WAYS)
		return RL_RETRY_LOOKUP;
	/* The way's version goes on with the new source: a reader of the old one sees a change. */
	lock = id | RL_SA6_LOCK | (vw & RL_SA6_VER_MASK);
	if (__sync_val_compare_and_swap(&set->id[victim], vw, lock) != vw)
		return RL_RETRY_LOOKUP;
	for (i = 0; i < RL_SA6_WAYS; i++) {
		if (i == victim)
			continue;
		w = *(volatile __u64 *)&set->id[i];
		if ((w & RL_SA6_ID_MASK) != id)
			continue;
		if ((w & RL_SA6_LOCK) || (*(volatile __u64 *)&set->key[2 * i] == k0 &&
					  *(volatile __u64 *)&set->key[2 * i + 1] == k1))
			break;
	}
	if (i < RL_SA6_WAYS) {
		/* Another copy is being inserted or is in: ours goes, the way as it was. */
		__sync_val_compare_and_swap(&set->id[victim], lock, vw);
		return RL_RETRY_LOOKUP;
	}
	if (rl_cfg.has_prev && sa6_prev(src, &st)) {
		cnt->carried++;
		st = rl_carry_state(&rl_cfg, st, now);
	} else {
		st = rl_initial_state(&rl_cfg.params, now);
	}
	pass = rl_step_at(&rl_cfg.params, st, now, a->tk, a->cost, &next);
	if (!pass)
		next = st;
	*(volatile __u64 *)&set->key[2 * victim] = k0;
	*(volatile __u64 *)&set->key[2 * victim + 1] = k1;
	*(volatile __u64 *)&set->st[victim] = next;
	release6(set, victim, lock);
	placed(cnt, vw & RL_SA6_USED, vw & RL_SA6_SEEN);
	return pass;
}

/*
 * One attempt at inserting IPv6 source @src, which its set does not hold:
 * as limit_sa6() with the source published, or RL_RETRY_LOOKUP when another
 * CPU changed the set first. The victim is an empty way, else the unlocked
 * one whose state is least ahead of the clock, among the sources not seen
 * again first (RL_SA6_SEEN), then among those seen again; it is locked from the word
 * read, with the new source's identity and the way's version; the other
 * ways are read for another copy of the source (a locked way with its
 * identity may be one: the claim is undone, the word put back as it was,
 * nothing else of the way written); then the key and the first state are
 * stored and the way released. As rl_wide4's insertion (wide_miss4()), so
 * no source is ever in two ways. A global function of its own, as
 * sa_miss4().
 */
__noinline int sa6_miss(struct rl_kcounters *cnt, const struct rl_key *src, __u64 now, __u64 cost)
{
	__s64 best = 0x7fffffffffffffffLL;
	struct sa6_claim_arg a = {};
	struct rl_sa6_set *set;
	int i, victim = -1;
	__u64 ref, w;

	if (!cnt || !src)
		return -1;
	key6(src, rl_cfg.mask6, &a.k0, &a.k1);
	set = set6(a.k0, a.k1, rl_cfg.gen, &a.id);
	if (!set)
		return -1;
	a.now = now;
	a.cost = cost;
	a.tk = tick(cnt, now);
	ref = rl_sa_ref_at(&rl_cfg.params, a.tk);
	for (i = 0; i < RL_SA6_WAYS; i++) {
		__s64 ahead;

		w = *(volatile __u64 *)&set->id[i];
		if (!(w & RL_SA6_USED)) { /* empty: never used, or its source deleted */
			victim = i;
			a.vw = w;
			break;
		}
		if (w & RL_SA6_LOCK)
			continue;
		ahead = (__s64)(*(volatile __u64 *)&set->st[i] - ref);
		/* Sources seen again go last, by a multiply, not a branch (fewer verifier paths). */
		ahead += (__s64)((w & RL_SA6_SEEN) * (RL_SA6_SEEN_RANK / RL_SA6_SEEN));
		if (ahead < best) {
			best = ahead;
			victim = i;
			a.vw = w;
		}
	}
	a.victim = victim;
	return sa6_claim(cnt, set, src, &a);
}

/*
 * A pass of IPv6 source @src counted for fleet sync (bpf/sync.h) under its
 * rl_sync6 key, the masked source and the generation: @ret, the verdict,
 * back. The one place the IPv6 paths count, so that sync counting can
 * change behind it.
 */
static __always_inline int count6(int ret, struct rl_kcounters *cnt, const struct rl_key *src,
				  __u64 cost)
{
	struct rl_state_key k = { .gen = rl_cfg.gen };
	__u64 k0, k1;

	if (!rl_cfg.sync_count || ret != 1)
		return ret;
	key6(src, rl_cfg.mask6, &k0, &k1);
	k.src.addr[0] = (__u32)k0;
	k.src.addr[1] = (__u32)(k0 >> 32);
	k.src.addr[2] = (__u32)k1;
	k.src.addr[3] = (__u32)(k1 >> 32);
	return sync_count(cnt, &rl_sync6, &k, cost);
}

/*
 * Fleet sync's charge (bpf/charge.h) of @units to the IPv6 source whose
 * masked key is @k (as rl_sync6 counted it): the charge in the lock of its
 * way, as round6() stores a pass; a full bucket or window (nothing to
 * store) when the identity word still reads as it did around the state. 1
 * charged, 0 not in the table, -1 RL_CAS_TRIES races lost, as
 * charge_wide4().
 */
__noinline int charge_sa6(const struct rl_key *k, __u64 now, __u64 units)
{
	__u64 k0, k1, id, w = 0, st, next;
	struct rl_sa6_set *set;
	int i, t;

	if (!k)
		return 0;
	k0 = (__u64)k->addr[1] << 32 | k->addr[0];
	k1 = (__u64)k->addr[3] << 32 | k->addr[2];
	set = set6(k0, k1, rl_cfg.gen, &id);
	if (!set)
		return 0;
	for (t = 0; t < RL_CAS_TRIES; t++) {
		i = find6(set, id, k0, k1, &w);
		if (i < 0 || i >= RL_SA6_WAYS)
			return 0;
		if (w & RL_SA6_LOCK)
			continue;
		st = *(volatile __u64 *)&set->st[i];
		if (!rl_charge(&rl_cfg.params, st, now, units, &next)) {
			if (*(volatile __u64 *)&set->id[i] == w)
				return 1;
			continue;
		}
		if (__sync_val_compare_and_swap(&set->id[i], w, w | RL_SA6_LOCK) != w)
			continue;
		*(volatile __u64 *)&set->st[i] = next;
		release6(set, i, w);
		return 1;
	}
	return -1;
}

#endif /* RL_BPF_TABLE6_SA_H */
