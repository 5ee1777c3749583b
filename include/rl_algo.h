/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The rate algorithms, written once and compiled unchanged into the XDP program
 * and into userspace (simulate, tests).
 *
 * Every function here is a pure function of (state word, now in ns, packet
 * cost, precomputed parameters): no helper calls, no floating point and no
 * division. Userspace turns a policy into struct rl_params (user/lib/policy.c);
 * the packet path only multiplies, adds, shifts and compares.
 *
 * Token bucket and GCRA: virtual time
 * -----------------------------------
 * Both are kept as one 64-bit "theoretical arrival time" (TAT) per source, in
 * virtual-time units (vt). The clock is converted with
 *
 *	vt(now) = floor(now_ns * vt_mult / 2^RL_VT_SHIFT)  (mod 2^64)
 *
 * and one cost unit (a packet, or a byte in byte mode) is worth unit_cost vt.
 * Userspace picks vt_mult and unit_cost so that vt_mult / 2^56 / unit_cost is
 * the rate per ns. When a cost unit lasts a whole number of ns (10^9 / rate
 * is an integer: 10/s, 1000/s, 100 Mbit/s...), vt is the ns and unit_cost that
 * number; above 10^9 cost units per second, when the rate is a whole number
 * of cost units per ns (400 Gbit/s: 50 bytes), vt is 1/U0 ns and unit_cost 1.
 * Either way every quantity is an integer and no decision is ever rounded.
 * Otherwise unit_cost is the largest integer with at most one vt per ns (or 1,
 * with up to 128 vt per ns, above 10^9 cost units per second), and vt_mult
 * carries 56 fractional bits, rounded up (by less than 1e-15 relative). vt(now)
 * is rounded down to whole vt, ticks of at most 2 ns (U between 1/2 and 1):
 * decisions are those of the algorithm on a clock that ticks in such steps. A
 * source sending at or below its rate is never dropped (rounding up makes
 * the clock never slow), and any interval D passes at most one tick's worth
 * more than burst + rate x D.
 *
 * The state is TAT mod 2^64, and ahead = TAT - vt(now) (mod 2^64) says where
 * the source stands:
 *	token bucket:	tokens * unit_cost = tau - ahead
 *	gcra:		level * unit_cost = ahead
 * with tau = burst * unit_cost. A source whose TAT lies behind now has a full
 * bucket (an empty queue): ahead is taken as 0. Since a stored TAT is never
 * more than ahead_max past the clock, any other value of ahead means "behind".
 * ahead_max adds RL_SKEW_VT to the largest TAT that can be stored, so that a
 * CPU whose clock read is a little older than the one that wrote the state
 * still sees the state as ahead (and so cannot be handed a fresh bucket).
 *
 * Limits: the vt clock wraps every 2^64 vt, and a source idle for g vt is
 * read correctly for any g < 2^64 - ahead_max. Below 10^9 cost units per
 * second there is at most one vt per ns, so that is more than 438 years: any
 * idle gap, with any clock value up to 2^63 ns. Above (byte rates beyond
 * 8 Gbit/s, where a byte lasts under a nanosecond) vt runs up to 128 times
 * faster than ns, and a source idle for a multiple of 2^64 vt (at least 4.5
 * years; 11.7 at 400 Gbit/s), within ahead_max, would be read as partly
 * used: 64 bits cannot hold both sub-nanosecond precision and a 2^64 ns range.
 *
 * Fixed and sliding window: window index and packed counters
 * ----------------------------------------------------------
 * The window index k = floor(now / W) is computed with a precomputed
 * reciprocal (multiply-high and one correction step, exact for all 64-bit
 * now). The state packs the low bits of k with the counts, each count in
 * cnt_bits, the fewest that hold limit - 1 + the largest cost:
 *	fixed window:	[ k mod 2^(64 - cnt_bits)   | count ]
 *	sliding window:	[ k mod 2^(64 - 2 cnt_bits) | previous | current ]
 * so counts never wrap, and the window id takes every bit left: 10 packets
 * per second keeps 60 (56) bits of id, beyond any clock. Only a source idle
 * for exactly a multiple of 2^id_bits windows (or one window short of one:
 * see rl_window_ahead()), within one window, would find its old counts
 * (with a byte limit of 10^8 per sliding window, 2^10 windows: the smallest
 * wrap; userspace refuses fewer than 16 bits of id).
 */
#ifndef RL_ALGO_H
#define RL_ALGO_H

#include <linux/types.h>

#ifndef RL_INLINE
#define RL_INLINE static inline __attribute__((always_inline))
#endif

enum rl_algo {
	RL_ALGO_TOKEN_BUCKET = 0,
	RL_ALGO_GCRA = 1,
	RL_ALGO_FIXED_WINDOW = 2,
	RL_ALGO_SLIDING_WINDOW = 3,
	RL_ALGO__COUNT,
};

/* Fixed-point position of vt_mult: vt per ns = vt_mult / 2^56. */
#define RL_VT_SHIFT 56
/* At most 128 vt per ns: rates up to 1.28e11 cost units per second. */
#define RL_VT_PER_NS_MAX 128
/* Clock disagreement between CPUs tolerated when reading a TAT (see above). */
#define RL_SKEW_VT (1ULL << 40)
/* Largest tau + one packet's cost, in vt; leaves 3/4 of the wrap for idling. */
#define RL_AHEAD_LIMIT (1ULL << 62)
/* Largest cost of one packet in byte mode: a frame length is at most 64 KiB. */
#define RL_MAX_FRAME 65535

/* Window ids keep at least this many bits: counts get at most 48 (24 each). */
#define RL_WIN_ID_BITS_MIN 16

/* Precomputed from a policy by rl_params_init() in userspace. */
struct rl_params {
	__u32 algo; /* enum rl_algo */
	__u32 bytes; /* 1: cost is the frame length; 0: 1 per packet */
	/* token bucket and gcra */
	__u64 vt_mult; /* vt per ns, fixed point << RL_VT_SHIFT */
	__u64 vt_int; /* vt per ns when a whole number (exact rates), else 0 */
	__u64 unit_cost; /* vt per cost unit */
	__u64 tau; /* burst * unit_cost */
	__u64 ahead_max; /* largest storable TAT - now, + RL_SKEW_VT */
	__u64 initial_ahead; /* TAT - now given to a new source */
	/* fixed and sliding window */
	__u64 window_ns; /* W */
	__u64 win_magic; /* floor((2^(64 + win_shift) - 1) / W) */
	__u64 win_shift; /* floor(log2(W)) */
	__u64 limit; /* L, in cost units per window */
	__u64 cnt_bits; /* bits of one count in the state */
	__u64 id_mask; /* 2^id_bits - 1: the window id kept in the state */
};

/* 64 x 64 -> 128-bit product from 32-bit halves (BPF has no 128-bit multiply). */
RL_INLINE __u64 rl_mul128(__u64 a, __u64 b, __u64 *lo)
{
	__u64 a0 = (__u32)a, a1 = a >> 32, b0 = (__u32)b, b1 = b >> 32;
	__u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	__u64 mid = (p00 >> 32) + (__u32)p01 + (__u32)p10;

	*lo = (mid << 32) | (__u32)p00;
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* The clock in vt units, mod 2^64. */
RL_INLINE __u64 rl_vt(const struct rl_params *p, __u64 now)
{
	__u64 lo, hi;

	/* Exact rates: now * U0, whose low 64 bits are all we keep. */
	if (p->vt_int)
		return now * p->vt_int;
	hi = rl_mul128(now, p->vt_mult, &lo);

	return (hi << (64 - RL_VT_SHIFT)) | (lo >> RL_VT_SHIFT);
}

/* k = floor(now / W) exactly, and the time elapsed in window k. */
RL_INLINE __u64 rl_window(const struct rl_params *p, __u64 now, __u64 *elapsed)
{
	__u64 lo, k = rl_mul128(now, p->win_magic, &lo) >> p->win_shift;
	__u64 e = now - k * p->window_ns;

	/* The reciprocal is low by less than one: at most one step up. */
	if (e >= p->window_ns) {
		k++;
		e -= p->window_ns;
	}
	*elapsed = e;
	return k;
}

/* TAT - vt(now) of a source, 0 when its TAT lies behind now. */
RL_INLINE __u64 rl_ahead(const struct rl_params *p, __u64 tat, __u64 vt)
{
	__u64 ahead = tat - vt;

	return ahead > p->ahead_max ? 0 : ahead;
}

/*
 * The clock as a policy reads it, computed once per packet: vt(now) for the
 * bucket algorithms, the window k = floor(now / W) for the window
 * algorithms. The steps below take it with now, so that a caller that also
 * needs it (the set-associative table's reference, include/rl_sa.h) does not
 * pay for a second 128-bit multiply; a window step derives the time elapsed
 * in window k from it with one multiply.
 */
RL_INLINE __u64 rl_tick(const struct rl_params *p, __u64 now)
{
	__u64 e;

	if (p->algo == RL_ALGO_FIXED_WINDOW || p->algo == RL_ALGO_SLIDING_WINDOW)
		return rl_window(p, now, &e);
	return rl_vt(p, now);
}

RL_INLINE int rl_bucket_step(const struct rl_params *p, __u64 tat, __u64 vt, __u64 cost,
			     __u64 *next)
{
	__u64 ahead = rl_ahead(p, tat, vt);
	__u64 c = cost * p->unit_cost;
	/*
	 * token bucket: passes iff tokens >= cost,  i.e. ahead + c <= tau;
	 * gcra:         passes iff level < burst,   i.e. ahead + 1 <= tau.
	 */
	__u64 need = p->algo == RL_ALGO_GCRA ? 1 : c;

	if (ahead > p->tau || p->tau - ahead < need)
		return 0;
	*next = vt + ahead + c;
	return 1;
}

/*
 * A window state's counts for window k: passed in k - 1 (sliding only) and in
 * k. The _as forms take the algorithm as an argument: the window steps pass
 * their own, a constant, so that their code holds no other algorithm's.
 */
RL_INLINE void rl_window_counts_as(const struct rl_params *p, __u32 algo, __u64 state, __u64 k,
				   __u64 *prev, __u64 *cur)
{
	__u64 mask = (1ULL << p->cnt_bits) - 1, id, pc = 0, cc = 0;

	/*
	 * Each output is stored once, at the end: clang merges conditional
	 * stores to the two into one store through a selected address, which
	 * keeps both on the BPF stack.
	 */
	if (algo == RL_ALGO_FIXED_WINDOW) {
		if ((state >> p->cnt_bits) == (k & p->id_mask))
			cc = state & mask;
	} else {
		id = state >> (2 * p->cnt_bits);
		if (id == (k & p->id_mask)) {
			pc = (state >> p->cnt_bits) & mask;
			cc = state & mask;
		} else if (id == ((k - 1) & p->id_mask)) {
			pc = state & mask;
		}
	}
	*prev = pc;
	*cur = cc;
}

RL_INLINE void rl_window_counts(const struct rl_params *p, __u64 state, __u64 k, __u64 *prev,
				__u64 *cur)
{
	rl_window_counts_as(p, p->algo, state, k, prev, cur);
}

/*
 * A state whose window is the one after k: another CPU, whose clock read came
 * later, has already moved the source into window k + 1 (or a set switched to
 * a clock that is behind by up to a tick). The packet is counted in that
 * window, at its start, rather than writing the older window back over it
 * and so starting window k + 1's count afresh. Returns the window to use.
 */
RL_INLINE __u64 rl_window_ahead_as(const struct rl_params *p, __u32 algo, __u64 state, __u64 k,
				   __u64 *e)
{
	__u64 shift = algo == RL_ALGO_SLIDING_WINDOW ? 2 * p->cnt_bits : p->cnt_bits;
	__u64 next = (state >> shift) == ((k + 1) & p->id_mask);

	/* Stored whatever the answer, as rl_window_counts_as() stores its outputs. */
	*e = next ? 0 : *e;
	return k + next;
}

RL_INLINE __u64 rl_window_ahead(const struct rl_params *p, __u64 state, __u64 k, __u64 *e)
{
	return rl_window_ahead_as(p, p->algo, state, k, e);
}

RL_INLINE int rl_fixed_step(const struct rl_params *p, __u64 state, __u64 now, __u64 k, __u64 cost,
			    __u64 *next)
{
	__u64 e = now - k * p->window_ns, prev, cur;

	k = rl_window_ahead_as(p, RL_ALGO_FIXED_WINDOW, state, k, &e);
	rl_window_counts_as(p, RL_ALGO_FIXED_WINDOW, state, k, &prev, &cur);
	if (cur >= p->limit)
		return 0;
	*next = ((k & p->id_mask) << p->cnt_bits) | (cur + cost);
	return 1;
}

RL_INLINE int rl_sliding_step(const struct rl_params *p, __u64 state, __u64 now, __u64 k,
			      __u64 cost, __u64 *next)
{
	__u64 e = now - k * p->window_ns;
	__u64 prev, cur, lhs_hi, lhs_lo, rhs_hi, rhs_lo;

	k = rl_window_ahead_as(p, RL_ALGO_SLIDING_WINDOW, state, k, &e);
	rl_window_counts_as(p, RL_ALGO_SLIDING_WINDOW, state, k, &prev, &cur);
	/*
	 * prev * (W - e) / W + cur < L  <=>  prev * (W - e) < (L - cur) * W,
	 * compared as 128-bit products so that no W is too long.
	 */
	if (cur >= p->limit)
		return 0;
	/*
	 * Counts are below 2^cnt_bits, so when W < 2^(64 - cnt_bits) (W under
	 * 18 minutes for the widest counts) both products fit in 64 bits:
	 * two multiplications instead of eight.
	 */
	if (!(p->window_ns >> (64 - p->cnt_bits))) {
		if (prev * (p->window_ns - e) >= (p->limit - cur) * p->window_ns)
			return 0;
		goto pass;
	}
	lhs_hi = rl_mul128(prev, p->window_ns - e, &lhs_lo);
	rhs_hi = rl_mul128(p->limit - cur, p->window_ns, &rhs_lo);
	if (lhs_hi > rhs_hi || (lhs_hi == rhs_hi && lhs_lo >= rhs_lo))
		return 0;
pass:
	*next = ((((k & p->id_mask) << p->cnt_bits) | prev) << p->cnt_bits) | (cur + cost);
	return 1;
}

/*
 * One packet of cost @cost at @now, whose rl_tick() is @tick, against a
 * source in state @state. Returns 1 (pass) with the state to store in
 * *next, or 0 (drop, state unchanged).
 */
RL_INLINE int rl_step_at(const struct rl_params *p, __u64 state, __u64 now, __u64 tick, __u64 cost,
			 __u64 *next)
{
	switch (p->algo) {
	case RL_ALGO_TOKEN_BUCKET:
	case RL_ALGO_GCRA:
		return rl_bucket_step(p, state, tick, cost, next);
	case RL_ALGO_FIXED_WINDOW:
		return rl_fixed_step(p, state, now, tick, cost, next);
	case RL_ALGO_SLIDING_WINDOW:
		return rl_sliding_step(p, state, now, tick, cost, next);
	}
	return 0;
}

RL_INLINE int rl_step(const struct rl_params *p, __u64 state, __u64 now, __u64 cost, __u64 *next)
{
	return rl_step_at(p, state, now, rl_tick(p, now), cost, next);
}

/* The state of a source first seen at @now (before its first packet is counted). */
RL_INLINE __u64 rl_initial_state(const struct rl_params *p, __u64 now)
{
	__u64 e;

	switch (p->algo) {
	case RL_ALGO_TOKEN_BUCKET:
	case RL_ALGO_GCRA:
		return rl_vt(p, now) + p->initial_ahead;
	case RL_ALGO_FIXED_WINDOW:
		/* An id two windows back: neither current nor previous, so empty. */
		return ((rl_window(p, now, &e) - 2) & p->id_mask) << p->cnt_bits;
	case RL_ALGO_SLIDING_WINDOW:
		return ((rl_window(p, now, &e) - 2) & p->id_mask) << (2 * p->cnt_bits);
	}
	return 0;
}

/*
 * Fleet sync (user/lib/sync_kern.h): @units cost units that other nodes passed
 * for this source, charged into its state at @now as if they had passed
 * here, without a verdict. Token bucket and gcra: TAT = max(TAT, vt(now)) +
 * units * unit_cost, so what exceeds the bucket stays as a debt that the
 * clock pays off; ahead is capped at the largest TAT a packet can store
 * (ahead_max - RL_SKEW_VT) so that rl_ahead() still reads it as ahead.
 * Windows: units are added to the current window's count, saturated at
 * the largest count the field holds (2^cnt_bits - 1: any count from the
 * limit up drops everything, and the field never overflows into the
 * window id). Returns 1 with the state to store in *next, 0 when there is
 * nothing to change (no units, or already saturated).
 */
RL_INLINE int rl_charge(const struct rl_params *p, __u64 state, __u64 now, __u64 units, __u64 *next)
{
	__u64 vt, ahead, cap, hi, lo, e, k, prev, cur, max;

	if (!units)
		return 0;
	switch (p->algo) {
	case RL_ALGO_TOKEN_BUCKET:
	case RL_ALGO_GCRA:
		vt = rl_vt(p, now);
		ahead = rl_ahead(p, state, vt);
		cap = p->ahead_max - RL_SKEW_VT;
		if (ahead >= cap)
			return 0;
		hi = rl_mul128(units, p->unit_cost, &lo);
		ahead = hi || lo > cap - ahead ? cap : ahead + lo;
		*next = vt + ahead;
		return 1;
	case RL_ALGO_FIXED_WINDOW:
	case RL_ALGO_SLIDING_WINDOW:
		max = (1ULL << p->cnt_bits) - 1;
		k = rl_window_ahead(p, state, rl_window(p, now, &e), &e);
		rl_window_counts(p, state, k, &prev, &cur);
		if (cur >= max)
			return 0;
		cur = units > max - cur ? max : cur + units;
		if (p->algo == RL_ALGO_FIXED_WINDOW)
			*next = ((k & p->id_mask) << p->cnt_bits) | cur;
		else
			*next = ((((k & p->id_mask) << p->cnt_bits) | prev) << p->cnt_bits) | cur;
		return 1;
	}
	return 0;
}

#endif /* RL_ALGO_H */
