/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The set-associative IPv4 table study (issue #11): what bench_sa.bpf.c and
 * bench/setassoc.c share. Plain C, no BPF helpers: both sides compute a
 * source's set and identity with the same functions.
 *
 * Table: a BPF_MAP_TYPE_ARRAY of 2^set_bits sets, each one 64-byte cache line
 * of SA_WAYS 8-byte slot words. A slot word is
 *
 *	bit 63		used (an all-zero word is an empty slot)
 *	bit 62		pending: claimed by an insertion not yet published
 *	bits 61-60	generation, mod 4
 *	bit 59		seen again (the product sets it; the study never does)
 *	bits 58..m	tag: the high 32 - set_bits bits of the source's hash
 *	bits m-1..0	state: the rate state (a TAT) mod 2^m, m = 27 + set_bits
 *
 * The hash is a bijection of the 32-bit address (salted by the generation), so
 * the set index and the tag together are the whole address: a tag match is
 * never a different source (within one generation mod 4; see bench_sa.bpf.c).
 */
#ifndef RL_BENCH_SA_H
#define RL_BENCH_SA_H

#include <linux/types.h>
#include "rl_sa.h" /* the product's hash: the study and the product key sets alike */

#define SA_WAYS	     8
#define SA_USED	     (1ULL << 63)
#define SA_PEND	     (1ULL << 62)
#define SA_GEN_SHIFT 60
/* Bits of the tag and generation above the state: m = SA_STATE_BASE + set_bits. */
#define SA_STATE_BASE 27
/* At least 2^10 sets: fewer would leave under 38 bits of state. */
#define SA_SET_BITS_MIN 10
#define SA_SET_BITS_MAX 24

struct sa_set {
	__u64 w[SA_WAYS];
};

/* The LRU program's key: the masked IPv4 source and the generation. */
struct sa_lkey {
	__be32 addr;
	__u32 gen;
};

/* Verdicts, as counter slots. */
enum { SA_V_PASS = 0, SA_V_DROP = 1, SA_V_GAVEUP = 2, SA_V__COUNT = 3 };

/* Per-CPU counters of both programs: packets and bytes by verdict, and the misses. */
struct sa_counters {
	__u64 packets[SA_V__COUNT];
	__u64 bytes[SA_V__COUNT];
	__u64 inserts; /* misses that inserted the source */
	__u64 retries; /* scans or compare-and-swaps repeated after a lost race */
};

/*
 * Test-only accounting (bench_sa.bpf.c with sa_test), indexed by the low bits
 * of a source's tag: its passes, and the state (vt) its evicted copies held
 * beyond their initial one.
 */
#define SA_TEST_SOURCES 64

struct sa_test_acct {
	__u64 passed[SA_TEST_SOURCES];
	__u64 evicted_vt[SA_TEST_SOURCES];
	__u64 evictions[SA_TEST_SOURCES];
	__u64 twins; /* hits that found their source published in two slots */
};

/*
 * The layout is the product's (include/rl_sa.h), but for the smaller tables
 * the study allows (SA_SET_BITS_MIN): the identity and state functions below
 * are the product's, and bench_sa.bpf.c runs the product's steps on a set
 * (bpf/sa_set.h).
 */
_Static_assert(SA_WAYS == RL_SA_WAYS && SA_USED == RL_SA_USED && SA_PEND == RL_SA_PEND &&
		       SA_GEN_SHIFT == RL_SA_GEN_SHIFT && SA_STATE_BASE == RL_SA_STATE_BASE &&
		       sizeof(struct sa_set) == sizeof(struct rl_sa_set),
	       "the study's slot word is the product's");

/*
 * The hash of a source (address in host order) in generation @gen: the
 * product's mix, salted by the whole generation (rl_sa_hash() salts by the
 * generation mod 4; the study only uses generation 1).
 */
static inline __u32 sa_hash(__u32 addr, __u32 gen)
{
	return rl_sa_mix32(addr ^ (gen * 0x9e3779b9U));
}

/* Used bit, generation and tag of a source with hash @h: compared under sa_id_mask(). */
static inline __u64 sa_id(__u32 h, __u32 gen, __u32 set_bits)
{
	return rl_sa_id(h, gen, set_bits);
}

static inline __u64 sa_state_mask(__u32 set_bits)
{
	return rl_sa_state_mask(set_bits);
}

static inline __u64 sa_id_mask(__u32 set_bits)
{
	return rl_sa_id_mask(set_bits);
}

/*
 * The full state from its low m bits, given vt(now): the value congruent to
 * @w mod 2^m within [vt - 2^(m-1), vt + 2^(m-1)).
 */
static inline __u64 sa_state_get(__u64 w, __u64 vt, __u32 set_bits)
{
	return rl_sa_get(w, vt, set_bits);
}

#endif /* RL_BENCH_SA_H */
