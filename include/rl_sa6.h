/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The IPv6 source table, rl_sets6: set-associative like the IPv4 one
 * (include/rl_sa.h), with the source's key stored whole. Shared by the XDP
 * program (bpf/table6_sa.h) and userspace (user/lib/sa6.c: walk, lookup,
 * migration), which compute a source's set, identity and words with these
 * functions.
 *
 * rl_sets6 is a BPF_F_MMAPABLE array of 2^bits sets, each 128 bytes (two
 * cache lines) of RL_SA6_WAYS ways. Way i is an identity word id[i], a state
 * word st[i] (the whole 64-bit rate state, as in rl_wide4: nothing is read
 * back near the clock, nothing is swept, every policy fits) and the masked
 * source key[2i], key[2i + 1] (the 16 bytes of struct rl_key, as two words
 * in memory order). An identity word is
 *
 *	bit 63		used (without it: an empty way, its version alone)
 *	bit 62		locked: only the holder writes the way's other words
 *	bits 61-60	generation, mod 4
 *	bits 59-44	tag: the hash's top 16 bits, so that a lookup reads the
 *			key of the matching way only
 *	bit 43		seen again: a packet of the source passed after the
 *			one that inserted it (eviction takes the others first)
 *	bits 42-0	version: one more at every release of the lock
 *
 * The key is stored whole, so a source is never taken for another (no
 * identity collision: the tag only filters), and userspace reads every
 * source back. The protocol is rl_wide4's (include/rl_sa.h), with the key
 * among the words the lock guards: a reader reads the identity word, then
 * the key and the state; what it read was one source's at one moment if the
 * identity word still reads the same after (a drop), or if the lock is taken
 * from the word read (a pass). A version repeats after 2^43 writes of one
 * way, which a reader would have to sleep through between two of its loads.
 *
 * The set index and the tag come from a 64-bit hash of the masked key
 * salted by the generation mod 4, as in rl_sets4, so that a source's copies
 * under generations g and g - 1 land in different sets.
 */
#ifndef RL_SA6_H
#define RL_SA6_H

#include <linux/types.h>
#include "rl_algo.h"

#define RL_SA6_WAYS	 4
#define RL_SA6_USED	 (1ULL << 63)
#define RL_SA6_LOCK	 (1ULL << 62)
#define RL_SA6_GEN_SHIFT 60
#define RL_SA6_TAG_SHIFT 44
#define RL_SA6_SEEN	 (1ULL << 43)
#define RL_SA6_VER_MASK	 (RL_SA6_SEEN - 1)
/* The used, generation and tag bits: what a lookup compares. */
#define RL_SA6_ID_MASK (~(RL_SA6_LOCK | RL_SA6_SEEN | RL_SA6_VER_MASK))
/*
 * Added to a way's rank as a victim (its state's distance ahead of the
 * clock) when its source was seen again, as RL_SA_SEEN_RANK in rl_sets4:
 * one-packet sources (a spoofed flood) evict each other first.
 */
#define RL_SA6_SEEN_RANK (1LL << 61)
/*
 * Ways per source asked for with --max-sources6, as in rl_wide4: four ways
 * fill unevenly, two per source keep evictions rare until the table is full
 * (docs/design.md, "The IPv6 table").
 */
#define RL_SA6_WAYS_PER_SOURCE 2
/* 2^4 sets (2 KiB) at least; 2^25 (4 GiB) for the largest --max-sources6. */
#define RL_SA6_BITS_MIN 4
#define RL_SA6_BITS_MAX 25

struct rl_sa6_set {
	__u64 id[RL_SA6_WAYS];
	__u64 st[RL_SA6_WAYS];
	__u64 key[2 * RL_SA6_WAYS];
};

/* murmur3's 64-bit finalizer. */
RL_INLINE __u64 rl_sa6_mix64(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * The hash of the masked key (@k0, @k1: its two words, include/rl_sa6.h's
 * order) in generation @gen, under the table's secret @key (rl_config's
 * sa_key, drawn at attach, as the IPv4 table's: include/rl_sa.h): the set is
 * its low bits, the tag its top 16. @k0 goes through a finalizer under the
 * key before @k1 is folded in, so that nobody who lacks the key can pick a
 * @k1 (an address of a /128 policy) that lands on another source's set.
 * Only the spread of sources over sets depends on it: the key is compared
 * whole.
 */
RL_INLINE __u64 rl_sa6_hash(__u64 k0, __u64 k1, __u32 gen, __u64 key)
{
	return rl_sa6_mix64(rl_sa6_mix64(k0 ^ key) ^ (k1 * 0x9e3779b97f4a7c15ULL) ^
			    ((__u64)(gen & 3) << 62));
}

/* The used, generation and tag bits of a source with hash @h. */
RL_INLINE __u64 rl_sa6_id(__u64 h, __u32 gen)
{
	return RL_SA6_USED | ((__u64)(gen & 3) << RL_SA6_GEN_SHIFT) |
	       ((h >> 48) << RL_SA6_TAG_SHIFT);
}

/* The identity word @w (locked or not) released after a write: the version plus one. */
RL_INLINE __u64 rl_sa6_next(__u64 w)
{
	return (w & ~(RL_SA6_LOCK | RL_SA6_VER_MASK)) | ((w + 1) & RL_SA6_VER_MASK);
}

#endif /* RL_SA6_H */
