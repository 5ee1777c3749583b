/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The IPv4 source table: set-associative (issue #11; the study is
 * bench/bpf/bench_sa.bpf.c, whose comment proves the protocol exact).
 * Shared by the XDP program and userspace (walk, lookup, migration, sweep):
 * both compute a source's set, identity and state with these functions.
 *
 * rl_sets4 is a BPF_F_MMAPABLE array of 2^bits sets, each one 64-byte cache
 * line of RL_SA_WAYS slot words. A slot word is
 *
 *	bit 63		used (an all-zero word is an empty slot)
 *	bit 62		pending: claimed by an insertion not yet published
 *	bits 61-60	generation, mod 4
 *	bit 59		seen again: a packet of the source passed after the one
 *			that inserted it (eviction spares such sources first)
 *	bits 58..m	tag: the high 32 - bits bits of the source's hash
 *	bits m-1..0	the rate state mod 2^m, m = RL_SA_STATE_BASE + bits
 *
 * The hash is a bijection of the 32-bit masked address (salted by the
 * generation and keyed by a secret drawn at attach), so set index and tag
 * are the whole address: a tag match is never another source, and
 * userspace, which knows the secret, recovers the address from a slot.
 *
 * The state is kept mod 2^m and read back as the value congruent to it
 * nearest a reference taken from the clock (rl_sa_ref()): vt(now) for the
 * bucket algorithms (a TAT), the current window's id shifted over the counts
 * for the window algorithms. See docs/design.md for the limits this puts on
 * policies (rl_sa_check()) and for the sweep of idle sources.
 */
#ifndef RL_SA_H
#define RL_SA_H

#include <linux/types.h>
#include <linux/bpf.h>
#include "rl_algo.h"

#define RL_SA_WAYS	8
#define RL_SA_USED	(1ULL << 63)
#define RL_SA_PEND	(1ULL << 62)
#define RL_SA_GEN_SHIFT 60
#define RL_SA_SEEN	(1ULL << 59)
/*
 * Added to a source's rank as a victim (how far ahead of the clock it
 * stands, within +-2^(m-1) <= 2^57) when it was seen again: every source
 * not seen again ranks below every one that was.
 */
#define RL_SA_SEEN_RANK (1LL << 61)
/* Bits of flags, generation and tag above the state: m = RL_SA_STATE_BASE + bits. */
#define RL_SA_STATE_BASE 27
/*
 * At least 2^14 sets (1 MiB): m >= 41, so that a bucket of up to 2^39 vt
 * (9 minutes at one vt per ns) fits; at most 2^25 sets (2 GiB, 2^28 slots
 * for the largest --max-sources), which leaves 7 bits of tag.
 */
#define RL_SA_BITS_MIN 14
#define RL_SA_BITS_MAX 25
/* Slots per source asked for with --max-sources: eight ways fill unevenly. */
#define RL_SA_SLOTS_PER_SOURCE 4
/* Window ids keep at least this many bits in the table (window algorithms). */
#define RL_SA_WIN_ID_BITS_MIN 8

struct rl_sa_set {
	__u64 w[RL_SA_WAYS];
};

/*
 * The sweep (bpf/sweep.h, sweep_cb()): a BPF timer that every
 * RL_SA_SWEEP_TICK_NS rewrites the idle states of 1/2^RL_SA_SWEEP_PARTS of
 * the sets, so each slot is swept once per RL_SA_SWEEP_PASS_NS (6.4 s),
 * whatever the table's size. A slot is misread only if the clock passes it
 * by 2^(m-1) vt between two sweeps: m >= 41, so 2^40 vt, 18 minutes at one
 * vt per ns and 8.6 s at 128 (the fastest byte rates) with the smallest
 * table, 2^5 times that with the default one (docs/design.md).
 */
#define RL_SA_SWEEP_PARTS   6
#define RL_SA_SWEEP_TICK_NS 100000000ULL
#define RL_SA_SWEEP_PASS_NS (RL_SA_SWEEP_TICK_NS << RL_SA_SWEEP_PARTS)
/*
 * How far behind the clock a swept TAT is written: more than any clock
 * disagreement between CPUs (1 s at one vt per ns, 8 ms at 128), far less
 * than 2^(m-1) (2^41 vt at least).
 */
#define RL_SA_SWEEP_SLACK (1ULL << 30)

/* The value of rl_sweep: the timer and where the sweep is (read by status). */
struct rl_sweep {
	struct bpf_timer t;
	__u64 armed; /* 1 once a load armed the timer (rl_sweep_arm) */
	__u64 next; /* the next set to sweep */
	__u64 passes; /* whole passes over the table */
	__u64 swept; /* states rewritten */
};

/* murmur3's 32-bit finalizer: every step is invertible, so it is a bijection. */
RL_INLINE __u32 rl_sa_mix32(__u32 x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return x;
}

/*
 * The hash of a masked source (address in host order) in generation @gen,
 * salted by the generation mod 4 only (what a slot keeps), and keyed by the
 * limiter's secret @key (struct rl_config's sa_key): the mix around an
 * exclusive or with each half of it. Still a bijection, which userspace,
 * knowing the key and a slot's generation, inverts to the address. Without
 * the key nobody can compute which sources share a set, so none can aim
 * spoofed sources at a chosen source's set to evict it (docs/design.md,
 * "Spoofed-source floods"). Not a cryptographic function: it defeats the
 * computation, not an attacker who can watch many evictions happen.
 */
RL_INLINE __u32 rl_sa_hash(__u32 addr, __u32 gen, __u64 key)
{
	return rl_sa_mix32(rl_sa_mix32(addr ^ ((gen & 3) * 0x9e3779b9U) ^ (__u32)key) ^
			   (__u32)(key >> 32));
}

/* Used bit, generation and tag of a source with hash @h: compared under rl_sa_id_mask(). */
RL_INLINE __u64 rl_sa_id(__u32 h, __u32 gen, __u32 bits)
{
	return RL_SA_USED | ((__u64)(gen & 3) << RL_SA_GEN_SHIFT) |
	       ((__u64)(h >> bits) << (RL_SA_STATE_BASE + bits));
}

RL_INLINE __u64 rl_sa_state_mask(__u32 bits)
{
	return (1ULL << (RL_SA_STATE_BASE + bits)) - 1;
}

/* The bits that tell sources apart: all but pending, seen again and the state. */
RL_INLINE __u64 rl_sa_id_mask(__u32 bits)
{
	return ~(RL_SA_PEND | RL_SA_SEEN | rl_sa_state_mask(bits));
}

/* Bits of the counts in a window state (0 for the bucket algorithms). */
RL_INLINE __u64 rl_sa_count_bits(const struct rl_params *p)
{
	if (p->algo == RL_ALGO_FIXED_WINDOW)
		return p->cnt_bits;
	if (p->algo == RL_ALGO_SLIDING_WINDOW)
		return 2 * p->cnt_bits;
	return 0;
}

/*
 * The reference a stored state is read back near: vt(now) for a TAT; for a
 * window state, the current window's id in the place rl_window_counts()
 * compares it, so that the id bits above m come back as the current
 * window's and the ones kept select k - 1, k or k + 1.
 */
RL_INLINE __u64 rl_sa_ref_at(const struct rl_params *p, __u64 tick)
{
	return tick << rl_sa_count_bits(p);
}

/* rl_sa_ref_at() of rl_tick() at @now. */
RL_INLINE __u64 rl_sa_ref(const struct rl_params *p, __u64 now)
{
	return rl_sa_ref_at(p, rl_tick(p, now));
}

/* The full state of word @w: congruent to it mod 2^m, within [ref - 2^(m-1), ref + 2^(m-1)). */
RL_INLINE __u64 rl_sa_get(__u64 w, __u64 ref, __u32 bits)
{
	__u32 sh = 64 - RL_SA_STATE_BASE - bits;

	return ref + (__u64)((__s64)((w - ref) << sh) >> sh);
}

/*
 * The wide layout (RL_TABLE4_WIDE, the map rl_wide4): for the policies
 * whose state does not fit m bits (rl_sa_check()), the same 64-byte sets
 * hold RL_SA_WIDE_WAYS ways, way i an identity word w[i] and a state word
 * w[RL_SA_WIDE_WAYS + i]. The identity word is a slot word (used, pending,
 * generation and tag, as above) whose low m bits are a version instead of a
 * state; the state word is the whole 64-bit rate state, so nothing is read
 * back near the clock and nothing needs sweeping. An empty way's identity
 * word is its version alone (not used): a deleted source leaves it there.
 *
 * The pending bit is a lock on the way: only the CPU (or userspace) that set
 * it with a compare-and-swap writes the state word, and it releases the way
 * by a compare-and-swap that clears the bit and, if it wrote the state,
 * adds one to the version (rl_sa_wide_next()). So a state word read between
 * two reads of its identity word that find the same unlocked word was that
 * source's state at that moment (a version repeats after 2^m >= 2^41
 * writes of one way in between: hours of a CPU held inside one read), and
 * a lock taken from the identity word read means the state read after it
 * is still current. A hit reads the identity word, the state, and either
 * the identity word again (a drop: nothing written) or locks from it, stores
 * the next state and releases (a pass). Exact as the single-word protocol
 * is, and for the same reasons, with the lock in place of the compare-and-
 * swap of the whole word (bpf/table4_wide.h, limit_wide4()). The
 * reads rely on the loads staying in program order, as on x86-64.
 */
#define RL_SA_WIDE_WAYS 4

/* The identity word of way @w after its state was written: the version plus one, unlocked. */
RL_INLINE __u64 rl_sa_wide_next(__u64 w, __u32 bits)
{
	__u64 sm = rl_sa_state_mask(bits);

	return (w & ~(RL_SA_PEND | sm)) | ((w + 1) & sm);
}

#endif /* RL_SA_H */
