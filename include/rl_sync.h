/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet sync, what the XDP object and user/lib/sync_kern.c share: the
 * counters a passed packet adds its units to, the charge and drain
 * programs' batch (an array map) and their arguments (the programs' ctx).
 *
 * Counting: with rl_config.sync_count set, each packet that passes adds its
 * cost units (1, or its bytes) to a counter of its source, which the agent
 * drains (reads and sets to 0 with an atomic exchange) every interval,
 * while packets go on counting: nothing is swapped, nothing waits.
 *
 * - IPv4 sources of a set table (rl_sets4, rl_wide4): in rl_sync_slots, an
 *   array of one counter word per slot of the set table, laid out as the
 *   table: the word of way w of set s is entry s << 3 | w (rl_sync_slot()),
 *   a set's counters in one cache line. (Way-major, w << bits | s, which
 *   puts the first ways' counters, the ones that fill first, close
 *   together, measured slower at 64k sources: bench/results/sync.md.) A
 *   counter word is a slot word (include/rl_sa.h) whose state bits count
 *   units: the identity (used, generation, tag) of the source that counted,
 *   and its units since the agent last drained them (RL_SYNC_UNITS_MAX at
 *   most). A packet adds to the word with a compare-and-swap, only under its
 *   own identity: a slot given to another source (eviction, a set) keeps the
 *   units of the one that counted until the agent drains them, and a counter
 *   drained to 0 is taken over by the next source of its slot that counts.
 *   Units never go to another source than the one that passed them: those
 *   that cannot be counted (another source's undrained units in the slot's
 *   counter, the counter full) are counted in sync_lost. rl_sync_dirty holds
 *   one bit per counter word, set by the packet that makes its units
 *   nonzero, so that a drain reads only the counters that counted (both
 *   arrays are BPF_F_MMAPABLE: the agent drains them through its mapping).
 * - IPv6 sources (rl_sets6), IPv4 ones of the LRU table (rl_state4), and
 *   sources of limit rules (rl_rstate): in an LRU hash under the state's
 *   own key (rl_sync6, rl_sync4, rl_syncr), drained by the syscall program
 *   rl_drain_prog, which walks the table and exchanges each counter with 0.
 */
#ifndef RL_SYNC_H
#define RL_SYNC_H

#include <linux/types.h>
#include "rl_common.h"
#include "rl_sa.h"

/* Sources charged (or drained from a keyed table) per run of the programs (their array map). */
#define RL_SYNC_BATCH 4096
/*
 * Compare-and-swap attempts of one charge. Unlike a packet, a charge must
 * not be lost to contention: it gives up only after this many lost races
 * (and is then reported as not charged).
 */
#define RL_SYNC_CAS_TRIES 64

/* The value size of rl_sync_status: struct rl_sync_status (user/lib/sync_kern.h) and room to grow. */
#define RL_SYNC_STATUS_SIZE 512

/* The entry of rl_sync_slots that counts for way @way of set @set. */
RL_INLINE __u32 rl_sync_slot(__u32 set, __u32 way)
{
	return set << 3 | way;
}

/* The set and the way of entry @ci of rl_sync_slots. */
RL_INLINE __u32 rl_sync_slot_set(__u32 ci)
{
	return ci >> 3;
}

RL_INLINE __u32 rl_sync_slot_way(__u32 ci)
{
	return ci & 7;
}

_Static_assert(RL_SA_WAYS == 8, "rl_sync_slot(): a set's eight counters in one line");

/*
 * The units a counter word holds at most: its state bits, at least 42 of
 * them (rl_sa_state_mask()), 4.4 x 10^12 units between two drains.
 */
#define RL_SYNC_UNITS_MAX(bits) rl_sa_state_mask(bits)

/*
 * A source of a limit rule, as the agent names sources (struct
 * rl_state_key): its key in rl_rstate (the source masked by the rule's
 * prefixes, the rule's slot and the slot's generation) with the slot and
 * generation in the gen word: RL_SYNC_GEN_RULE | slot << 16 | generation.
 * The default rule's sources carry the configuration's generation there,
 * which stays below 2^31 (one per set).
 */
#define RL_SYNC_GEN_RULE	  (1U << 31)
#define RL_SYNC_RULE_GEN(slot, g) (RL_SYNC_GEN_RULE | ((__u32)(slot) << 16) | ((g)&0xffff))
#define RL_SYNC_GEN_SLOT(gen)	  (((gen) >> 16) & 0x7fff)

/* One source's units; IPv4 sources as IPv4-mapped IPv6 (as rl_state_walk()). */
struct rl_sync_chg {
	struct rl_state_key k;
	__u32 pad;
	__u64 units;
};

/* The charge program's ctx: charge entries [0, n) of rl_chg. */
struct rl_sync_args {
	__u32 n; /* in */
	__u32 charged; /* out: entries whose state was found and updated */
	__u32 lost; /* out: entries given up after RL_SYNC_CAS_TRIES lost races */
	__u32 pad;
};

/* The keyed counter tables rl_drain_prog drains (struct rl_sync_drain_args.table). */
enum rl_sync_table {
	RL_SYNC_T4 = 0, /* rl_sync4: IPv4 sources of the LRU table */
	RL_SYNC_T6 = 1, /* rl_sync6: IPv6 sources */
	RL_SYNC_TR = 2, /* rl_syncr: sources of limit rules */
};

/*
 * The drain program's ctx: the nonzero counters of @table, each exchanged
 * with 0, into rl_chg[0, n) (as the agent names sources). At most
 * RL_SYNC_BATCH per run: @more says that some were left for the next run.
 */
struct rl_sync_drain_args {
	__u32 table; /* in: enum rl_sync_table */
	__u32 n; /* out */
	__u32 more; /* out: 1 if rl_chg filled up before the walk ended */
	__u32 pad;
};

#endif /* RL_SYNC_H */
