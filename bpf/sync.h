/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fleet sync counting (include/rl_sync.h): what a passed packet adds to its
 * source's counter, in the slot's counter word of rl_sync_slots for a set
 * table's IPv4 source (sync_slot4()), in a keyed table for the others
 * (sync_count(): rl_sync4, rl_sync6, rl_syncr); and the drain of the keyed
 * tables (rl_drain_prog of xdp_ratelimit.bpf.c). The agent drains
 * rl_sync_slots itself, through its mapping (user/lib/sync_kern.c).
 * Compiled in only with rl_cfg.sync_count: otherwise the verifier removes
 * every call.
 *
 * Includes maps.h and include/ headers only.
 */
#ifndef RL_BPF_SYNC_H
#define RL_BPF_SYNC_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa.h"
#include "rl_sync.h"
#include "maps.h"

/*
 * Sync counting in a keyed table (@map: rl_sync4, rl_sync6 or rl_syncr,
 * under the source's state key): add a passed packet's @cost to its source.
 * Atomic adds: one source's packets on many CPUs are all counted, and the
 * drain's exchange takes each unit exactly once. A new source is inserted at
 * 0 (another CPU may insert it first: EEXIST is fine) and added to like the
 * others. Units that cannot be counted (no room) are counted in sync_lost
 * (@cnt may be NULL: then they are not). Out of line, and called only when
 * sync_count is compiled in: otherwise the verifier removes the call.
 * Returns the caller's verdict (1: passed), so that the caller keeps one
 * value fewer across the call: the main program's stack has no room for
 * another spill (slow_path() and its subprograms).
 */
static __noinline int sync_count(struct rl_kcounters *cnt, void *map, const void *key, __u64 cost)
{
	__u64 *u;

	if (!key)
		return 1;
	u = bpf_map_lookup_elem(map, key);
	if (!u) {
		bpf_map_update_elem(map, key, (const void *)&rl_sync_zero, BPF_NOEXIST);
		u = bpf_map_lookup_elem(map, key);
		if (!u) {
			if (cnt)
				cnt->sync_lost += cost;
			return 1;
		}
	}
	__sync_fetch_and_add(u, cost);
	return 1;
}

/* @ret, after counting a pass when sync counting is compiled in. */
static __always_inline int counted(int ret, struct rl_kcounters *cnt, void *map, const void *key,
				   __u64 cost)
{
	if (rl_cfg.sync_count && ret == 1)
		return sync_count(cnt, map, key, cost);
	return ret;
}

/*
 * Set counter @ci's bit in rl_sync_dirty: its units went from 0 to some.
 * After the counter's compare-and-swap, which orders it (a BPF atomic that
 * returns a value is fully ordered): a drain that took the bit before that
 * compare-and-swap and read the counter before it too finds the bit set
 * again (the drain's own exchange orders its read after the bit is taken),
 * so no unit is left behind a clear bit. Out of line: it runs once per
 * counter and drain, and the main program has no stack to spare.
 */
static __noinline void sync_dirty(__u32 ci)
{
	__u32 word = ci >> 6;
	__u64 *d = bpf_map_lookup_elem(&rl_sync_dirty, &word);

	if (d)
		__sync_fetch_and_or(d, 1ULL << (ci & 63));
}

/*
 * Sync counting of a set table's IPv4 source (include/rl_sync.h): add a
 * passed packet's @cost to the counter word of way @way of set *@idx, under
 * the source's identity @id (its slot word's used, generation and tag
 * bits). *@idx (the caller's, already on its stack for the set's lookup)
 * becomes the counter's index. The word counts for @id: add. It counts for
 * another source and holds no units (drained): take it over. It holds
 * another source's units, not drained yet: those stay, and this packet's
 * units are lost (sync_lost), as when the word is full. A compare-and-swap
 * over the word read, so a drain (which keeps the identity and zeroes the
 * units) and other CPUs never lose a unit; the packet that makes the units
 * nonzero marks the counter for the drain. In line: out of line, the call
 * and its return would cost a one-source packet more than the rest. (Its
 * counter read as soon as the set is known, so that the two cache lines
 * come together, measured no faster: the read is not done.)
 */
static __always_inline void sync_slot4(struct rl_kcounters *cnt, __u32 *idx, int way, __u64 id,
				       __u64 cost)
{
	__u64 idm = rl_sa_id_mask(rl_sa_bits), sm = rl_sa_state_mask(rl_sa_bits), old, units;
	__u64 *c;
	int t;

	if (!rl_cfg.sync_count)
		return;
	*idx = rl_sync_slot(*idx, (__u32)way);
	c = bpf_map_lookup_elem(&rl_sync_slots, idx);
	if (!c) {
		cnt->sync_lost += cost;
		return;
	}
	for (t = 0; t < RL_CAS_TRIES; t++) {
		old = *(volatile __u64 *)c;
		units = old & sm;
		if ((old & idm) != id && units)
			break;
		if (units + cost > sm)
			break;
		if (__sync_val_compare_and_swap(c, old, id | (units + cost)) == old) {
			if (!units)
				sync_dirty(*idx);
			return;
		}
	}
	cnt->sync_lost += cost;
}

/* rl_drain_prog's walk of a keyed table: what it has written to rl_chg. */
struct drain_ctx {
	__u32 n, more;
};

/*
 * One counter of a keyed table, @key as the agent names sources: if it
 * holds units, exchange them with 0 into rl_chg[n]. Stops the walk (1) when
 * rl_chg is full; the counters left are drained by the next run.
 */
static __always_inline long drain_put(struct drain_ctx *d, const struct rl_state_key *key, __u64 *v)
{
	struct rl_sync_chg *e;
	__u32 i = d->n;
	__u64 units;

	if (!*(volatile __u64 *)v)
		return 0;
	e = bpf_map_lookup_elem(&rl_chg, &i);
	if (!e || i >= RL_SYNC_BATCH) {
		d->more = 1;
		return 1;
	}
	units = __sync_lock_test_and_set(v, 0);
	if (!units)
		return 0;
	e->k = *key;
	e->pad = 0;
	e->units = units;
	d->n = i + 1;
	return 0;
}

/* rl_sync4: IPv4 sources of the LRU table, named IPv4-mapped. */
static long drain4(void *map, const struct rl_state_key4 *key, __u64 *v, struct drain_ctx *d)
{
	struct rl_state_key k = { .gen = key->gen };

	k.src.addr[2] = bpf_htonl(0xffff);
	k.src.addr[3] = key->addr;
	return drain_put(d, &k, v);
}

static long drain6(void *map, const struct rl_state_key *key, __u64 *v, struct drain_ctx *d)
{
	struct rl_state_key k = *key;

	return drain_put(d, &k, v);
}

/* rl_syncr: a rule's slot and generation in the gen word (RL_SYNC_RULE_GEN()). */
static long drainr(void *map, const struct rl_rstate_key *key, __u64 *v, struct drain_ctx *d)
{
	struct rl_state_key k = { .src = key->src, .gen = RL_SYNC_RULE_GEN(key->slot, key->gen) };

	return drain_put(d, &k, v);
}

#endif /* RL_BPF_SYNC_H */
