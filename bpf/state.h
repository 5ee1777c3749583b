/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every source table's path shares: the answers a table gives besides
 * a verdict (RL_RETRY_LOOKUP, RL_CAS_LOST, RL_NOT_HELD, RL_ROUND_LOST), the
 * outcome of inserting a new source (inserted(), placed()) and one packet against a
 * whole 64-bit state word in a compare-and-swap loop (step_state(), the
 * LRU tables' step).
 *
 * Includes clock.h (tick()), sync.h (counted()), maps.h and include/
 * headers only; the table headers include it.
 */
#ifndef RL_BPF_STATE_H
#define RL_BPF_STATE_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa.h"
#include "maps.h"
#include "clock.h"
#include "sync.h"

/* A new source's insertion lost to another CPU's: look it up again. */
#define RL_RETRY_LOOKUP 2

/* step_state()'s answer when it gave up after RL_CAS_TRIES lost races: over the limit. */
#define RL_CAS_LOST (-2)

/*
 * What a table's hit path answers when it did not decide: the table does
 * not hold the source (an insertion follows), or it used a round without
 * deciding (a pending slot, a lost race), which counts against RL_CAS_TRIES.
 */
#define RL_NOT_HELD   3
#define RL_ROUND_LOST 4

/* The outcome of inserting a new source: as first_step(), or a retry, or a failure. */
static __always_inline int inserted(struct rl_kcounters *cnt, int err, int pass)
{
	if (!err) {
		cnt->new_sources++;
		return pass;
	}
	if (err == -17 /* EEXIST: another CPU inserted it first */)
		return RL_RETRY_LOOKUP;
	cnt->insert_failed++;
	return -1;
}

/*
 * A new source placed in a set table's slot or way by its claim (the
 * sa4_claim() kind): counted, with the source it evicted when @evicted, of
 * one seen again when @seen (the table's own bits of the old word).
 */
static __always_inline void placed(struct rl_kcounters *cnt, __u64 evicted, __u64 seen)
{
	cnt->new_sources++;
	if (evicted) {
		cnt->evicted++;
		if (seen)
			cnt->evicted_seen++;
	}
}

/*
 * The set of IPv4 source @addr in the set table @map (rl_sets4 or rl_wide4,
 * both of 2^rl_sa_bits sets), its index in *idx and its identity in *id.
 * The lookup cannot fail (idx < max_entries).
 */
static __always_inline struct rl_sa_set *set4(void *map, __be32 addr, __u32 *idx, __u64 *id)
{
	__u32 bits = rl_sa_bits, h = rl_sa_hash(bpf_ntohl(addr), rl_cfg.gen, rl_cfg.sa_key);

	*idx = h & ((1U << bits) - 1);
	*id = rl_sa_id(h, rl_cfg.gen, bits);
	return bpf_map_lookup_elem(map, idx);
}

/*
 * The arguments of the claim of a slot or way in an IPv4 set table
 * (sa4_claim(), wide_claim4()): one pointer, as a call takes five at most.
 */
struct claim4_arg {
	__u64 id, vw, now, tk, cost;
	__be32 addr;
	__u32 idx;
	int victim;
};

/* @a's packet: source @addr at @now, @cost, the window's tick; returns the reference victims rank by. */
static __always_inline __u64 claim4_packet(struct claim4_arg *a, struct rl_kcounters *cnt,
					   __be32 addr, __u64 now, __u64 cost)
{
	a->addr = addr;
	a->now = now;
	a->cost = cost;
	a->tk = tick(cnt, now);
	return rl_sa_ref_at(&rl_cfg.params, a->tk);
}

/*
 * One packet against the state word @st: 1 within the limit, 0 over it (or
 * RL_CAS_LOST). A pass is counted for sync (@map, @key) here, where the
 * loop keeps everything it needs live anyway. @lost: races the caller lost
 * on it already (0 or 1), which count against RL_CAS_TRIES.
 */
static __always_inline int step_state(struct rl_kcounters *cnt, __u64 *st, __u64 now, __u64 cost,
				      void *map, const void *key, int lost)
{
	__u64 tk, old, next;
	int i;

	tk = tick(cnt, now);
	for (i = lost ? 1 : 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)st;
		if (!rl_step_at(&rl_cfg.params, old, now, tk, cost, &next))
			return 0;
		if (__sync_val_compare_and_swap(st, old, next) == old)
			return counted(1, cnt, map, key, cost);
		cnt->cas_retries++;
	}
	cnt->cas_exhausted++;
	return RL_CAS_LOST;
}

#endif /* RL_BPF_STATE_H */
