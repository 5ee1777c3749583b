/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reading and writing a limiter's maps: configuration slots, counters, sources. */
#ifndef RL_MAPS_H
#define RL_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"
#include "rl_events.h"
#include "maplist.h"

struct rl_rules_cfg;

/*
 * The live configuration and its slot: the program's own (rl_live_compiled()),
 * past a copy a killed command left stale.
 */
int rl_config_read(const struct rl_pins *pins, struct rl_config *cfg, __u32 *active);
/*
 * --max-sources6 as attached (rl_ctl), or for maps made before rl_ctl
 * recorded it, what rl_sets6 is sized for; 0 if neither can be read.
 */
__u32 rl_max_sources6(const struct rl_pins *pins);
/*
 * What the limiter of @pins runs, read from the program itself: the policy
 * and the rules compiled into its read-only data (.rodata.cfg), from the
 * program the interfaces of this namespace that run these maps run. Either
 * of @cfg and @rules may be NULL.
 *
 * This, not the copies in rl_config and rl_rcfg, is the record of what is
 * live: a change swaps one program in (the commit point) and rewrites the
 * copies after it, so a command killed in between leaves stale copies, which
 * rl_config_read() and rl_rules_read() then read past. 0; -ENOENT if no
 * program of ours on these maps is attached in this namespace (new maps, a
 * limiter of another namespace: the copies are all there is), or if the
 * members of a shared limiter run different programs (a change killed
 * between their swaps: it wrote no copy, the copies are the old state);
 * -errno.
 */
int rl_live_compiled(const struct rl_pins *pins, struct rl_config *cfg, struct rl_rules_cfg *rules);
/* Write @cfg into the slot not in use, then make it live with one 32-bit write. */
int rl_config_swap(const struct rl_pins *pins, const struct rl_config *cfg, __u32 active);
/*
 * After a set whose program (generation cfg->gen) is live: move every
 * source's state to the new generation and delete every other entry (see
 * migrate.c); the caller then swaps in a program that no longer looks up the
 * old generation. -EAGAIN when the prefixes grew: old entries cannot be
 * split, the packet path carries them over one by one. *moved counts the
 * states moved.
 */
int rl_migrate(const struct rl_pins *pins, const struct rl_config *cfg, __u64 *moved);
/* The per-CPU counters in map @map_fd, summed over every possible CPU. */
int rl_counters_sum(int map_fd, struct rl_counters *sum);
/* Counters summed over CPUs. */
int rl_counters_read(const struct rl_pins *pins, struct rl_counters *sum);
/*
 * Every tracked source of both tables (IPv4 keys as IPv4-mapped IPv6), in
 * batches: @fn may change the tables between calls. A non-zero return from
 * @fn stops the walk and is returned. @read_ns is CLOCK_MONOTONIC (the
 * packet clock) read just after the entry (or the batch that holds it) was
 * read: the state is never newer than @read_ns, so a source never shows
 * more used than the policy lets it be.
 */
typedef int (*rl_state_fn)(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx);
int rl_state_walk(const struct rl_pins *pins, rl_state_fn fn, void *ctx);
/*
 * What a bounded walk may read, and what it read. @max_states: at most
 * about that many states handed to @fn (the batch that reaches it is
 * finished; 0: no bound, every source); @start: the set of each set table
 * it starts from (any number: taken modulo the sets), wrapping around.
 */
struct rl_walk_budget {
	__u64 max_states;
	__u32 start;
	/* Out: */
	__u64 states; /* handed to @fn */
	__u64 slots_read; /* slots and hash entries loaded */
	__u64 sets_read, sets_total; /* sets of the set tables read, and there are */
	bool whole; /* every source was read */
};
/*
 * rl_state_walk() within @b, for readers that change no table (top): the
 * IPv6 table, then the IPv4 ones. A set table is read in batches of sets,
 * the clock read once after each batch's loads (rather than after each
 * slot: on some virtual machines a clock read costs microseconds).
 */
int rl_state_walk_some(const struct rl_pins *pins, struct rl_walk_budget *b, rl_state_fn fn,
		       void *ctx);
/*
 * The sources @keys[0..@n-1] looked up as rl_state_lookup() does, with one
 * mapping of the IPv4 table and one clock read after every lookup: @fn for
 * each one found. *looked counts the lookups.
 */
int rl_state_lookup_many(const struct rl_pins *pins, const struct rl_state_key *keys, size_t n,
			 __u64 *looked, rl_state_fn fn, void *ctx);
struct rl_hot;
/* The limited sources (include/rl_hot.h), all of them, with one lookup. */
int rl_hot_read(const struct rl_pins *pins, struct rl_hot *h);
/*
 * Tests whose programs read the test clock (rl_clock) set this to its fd:
 * rl_sets4's states are then read back near that clock rather than near
 * CLOCK_MONOTONIC. -1 (the default): the packet clock.
 */
extern int rl_state_clock_fd;
/* One source's state, in the table of its family: 0 or -errno. */
int rl_state_lookup(const struct rl_pins *pins, const struct rl_state_key *k, __u64 *val);
int rl_state_update(const struct rl_pins *pins, const struct rl_state_key *k, __u64 val,
		    __u64 flags);
int rl_state_delete(const struct rl_pins *pins, const struct rl_state_key *k);
/*
 * Rewrite the IPv4 states the clock has left far behind (user/lib/sa.h,
 * rl_sa_sweep()), as the kernel's timer does: *swept counts them. 0 with
 * nothing swept when the policy uses the LRU table.
 */
int rl_state_sweep(const struct rl_pins *pins, __u64 *swept);
/* Sources tracked under generation @gen (a walk of the table: not for every second). */
int rl_count_sources(const struct rl_pins *pins, __u32 gen, __u64 *n);

#endif /* RL_MAPS_H */
