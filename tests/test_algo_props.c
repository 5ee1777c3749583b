// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Properties of the rate core's own decisions on random traces (the burst
 * bound, a source at its rate never dropped, the window counts), the sliding
 * window's comparisons, and its rate accuracy over a long overload. The spec
 * and the reference model: tests/lib/algo_model.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include "algo_model.h"
#include "test.h"

struct rec {
	__u64 t, cost;
	bool pass;
};

/* The core's decisions for source @ref of a trace of @n packets. Returns how many. */
static size_t record(const struct cfg *c, const struct pkt *p, size_t n, unsigned int ref,
		     struct rec *out)
{
	struct rl_sim s;
	size_t k = 0;

	if (!cfg_sim(c, &s))
		return 0;
	for (size_t i = 0; i < n; i++) {
		int pass = core_pkt(&s, p[i].src, p[i].t, p[i].len);

		if (src_ref(c, p[i].src) == ref) {
			out[k].t = p[i].t;
			out[k].cost = c->bytes ? p[i].len : 1;
			out[k].pass = pass == 1;
			k++;
		}
	}
	rl_sim_free(&s);
	return k;
}

/*
 * Token bucket: the cost passed in any closed interval of length D is at most
 * b + r D. Gcra: the cost passed in it, less the cost of the last packet to
 * pass, is below b + r D (each packet passes with a level below b; the level
 * drains by at most r D); in packets, at most b + ceil(r D).
 *
 * In units of 1 / d: for passes i <= j, with P the cumulative cost passed,
 *	token bucket:	(P_j - P_(i-1)) d - r (t_j - t_i) <= b d
 *	gcra:		(P_(j-1) - P_(i-1)) d - r (t_j - t_i) < b d
 * checked for all pairs at once by keeping the least P_(i-1) d - r t_i.
 *
 * Exact where cfg_exact(); otherwise on the core's vt clock, whose ticks are
 * at most 2 ns, rl_algo.h promises b + r (D + one tick): the bound gets r x
 * 2 ns of slack, plus 2^-50 of r D for the clock's relative error.
 */
static bool check_bucket_bound(const struct cfg *c, const struct rec *rc, size_t n,
			       const char *what)
{
	s128 d = (s128)c->den * NSEC, r = c->num, b = c->burst ? c->burst : default_burst(c);
	s128 p = 0, least = 0, tol = 0;
	__u64 t0 = n ? rc[0].t : 0, ti = 0;
	bool any = false, exact = cfg_exact(c);

	for (size_t j = 0; j < n; j++) {
		s128 t = rc[j].t - t0, bi, lhs;

		if (!rc[j].pass)
			continue;
		bi = p * d - r * t;
		if (!any || bi < least) {
			least = bi;
			ti = rc[j].t;
		}
		any = true;
		p += rc[j].cost;
		lhs = (c->algo == TB ? p : p - (s128)rc[j].cost) * d - r * t - least;
		if (!exact)
			tol = r * (2 + (s128)((rc[j].t - ti) >> 50));
		if (c->algo == TB ? lhs > b * d + tol : lhs >= b * d + tol) {
			rl_test_fail(
				__FILE__, __LINE__,
				"%s: --rate %s --burst %llu: too much passed from t=%llu to t=%llu ns (RL_SEED=%llu)",
				what, c->rate, (unsigned long long)b, (unsigned long long)ti,
				(unsigned long long)rc[j].t, rl_test_seed());
			return false;
		}
	}
	return true;
}

static const struct cfg bound_cfgs[] = {
	{ TB, "10", 10, 1, false, 20, -1, 0, 0 },
	{ TB, "3", 3, 1, false, 1, -1, 0, 24 },
	{ TB, "12.5", 25, 2, false, 7, -1, 0, 0 },
	{ TB, "100mpps", 100000000, 1, false, 3, -1, 0, 0 },
	{ TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
	{ TB, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 24 },
	{ TB, "12345678", 12345678, 1, false, 10, -1, 0, 0 },
	{ TB, "1001bit", 1001, 8, true, 5000, -1, 0, 0 },
	{ GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
	{ GCRA, "3", 3, 1, false, 1, -1, 0, 24 },
	{ GCRA, "12.5", 25, 2, false, 7, -1, 0, 0 },
	{ GCRA, "100mpps", 100000000, 1, false, 3, -1, 0, 0 },
	{ GCRA, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
	{ GCRA, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 24 },
	{ GCRA, "12345678", 12345678, 1, false, 10, -1, 0, 0 },
	{ GCRA, "1001bit", 1001, 8, true, 5000, -1, 0, 0 },
};

TEST(algo_prop_bucket_bound)
{
	static struct pkt p[TRACE_LEN];
	static struct rec rc[TRACE_LEN];
	__u64 rs = seed_for(3);

	for (size_t c = 0; c < ARRAY_SIZE(bound_cfgs); c++) {
		for (int r = 0; r < 12; r++) {
			size_t n;

			gen_trace(&rs, &bound_cfgs[c], p, TRACE_LEN, gen_start(&rs), r % 4 == 3);
			n = record(&bound_cfgs[c], p, TRACE_LEN, 0, rc);
			if (!check_bucket_bound(&bound_cfgs[c], rc, n,
						algo_str[bound_cfgs[c].algo]))
				break;
		}
	}
}

/*
 * A source sending evenly spaced packets of one size, at most at its rate
 * (interval >= len / r), is never dropped: token bucket with b >= len, gcra
 * with b >= 1.
 */
struct at_rate {
	const char *rate;
	__u64 num, den;
	bool bytes;
	__u32 len;
	__u64 burst;
};

static const struct at_rate at_rate_cfgs[] = {
	{ "1", 1, 1, false, 64, 1 },
	{ "3", 3, 1, false, 64, 1 },
	{ "7", 7, 1, false, 64, 1 },
	{ "10", 10, 1, false, 64, 1 },
	{ "12.5", 25, 2, false, 64, 1 },
	{ "129", 129, 1, false, 64, 1 },
	{ "12345678", 12345678, 1, false, 64, 1 },
	{ "73000000", 73000000, 1, false, 64, 1 },
	{ "100mpps", 100000000, 1, false, 64, 1 },
	{ "12kbit", 1500, 1, true, 1500, 1500 },
	{ "10kbit", 1250, 1, true, 64, 64 },
	{ "137byte", 137, 1, true, 137, 137 },
	{ "1001bit", 1001, 8, true, 1001, 1001 },
	{ "1009byte", 1009, 1, true, 1009, 1009 },
	{ "1009byte", 1009, 1, true, 64, 64 },
	{ "1gbit", 125000000, 1, true, 1500, 1500 },
	{ "400gbit", 50000000000ULL, 1, true, 65535, 65535 },
	{ "399999999999bit", 399999999999ULL, 8, true, 1500, 1500 },
};

/*
 * 3000 packets of @a->len bytes from @t0, every @step ns (or, with @jitter,
 * every @step to 4 @step ns). False, after reporting, if any was dropped.
 */
static bool at_rate_run(const struct cfg *c, const struct at_rate *a, __u64 t0, __u64 step,
			bool jitter, __u64 *rs)
{
	unsigned int drops = 0;
	size_t first = 0;
	struct rl_sim s;
	__u64 t = t0;

	if (!cfg_sim(c, &s))
		return false;
	for (size_t j = 0; j < 3000; j++) {
		if (core_pkt(&s, 0, t, a->len) != 1 && !drops++)
			first = j;
		t += jitter ? step + rl_rand_below(rs, 3 * step) : step;
	}
	rl_sim_free(&s);
	if (drops) {
		rl_test_fail(
			__FILE__, __LINE__,
			"%s --rate %s --burst %llu, %u-byte packets every %llu ns%s from t=%llu: %u dropped, the first at packet %zu (RL_SEED=%llu)",
			algo_str[c->algo], a->rate, (unsigned long long)c->burst, a->len,
			(unsigned long long)step, jitter ? " or more" : "", (unsigned long long)t0,
			drops, first, rl_test_seed());
		return false;
	}
	return true;
}

TEST(algo_prop_at_rate_never_dropped)
{
	static const __u64 starts[] = { 0,	   NSEC,       5 * NSEC,
					987654321, 1ULL << 62, (1ULL << 63) - 1000 * NSEC };
	__u64 rs = seed_for(4);

	for (size_t i = 0; i < ARRAY_SIZE(at_rate_cfgs); i++) {
		const struct at_rate *a = &at_rate_cfgs[i];
		u128 d = (u128)a->den * NSEC;
		/* The least whole-ns interval at or above len / r. */
		__u64 iv = (__u64)(((u128)a->len * d + a->num - 1) / a->num);

		for (int algo = TB; algo <= GCRA; algo++) {
			const struct cfg c = { algo,   a->rate,	 a->num,
					       a->den, a->bytes, algo == TB ? a->burst : 1,
					       -1,     0,	 0 };

			for (size_t k = 0; k < ARRAY_SIZE(starts) + 4; k++) {
				__u64 t0 = k < ARRAY_SIZE(starts) ? starts[k] : rl_rand(&rs) >> 2;
				/* At the rate, or a little below; the last two jittered. */
				__u64 step = k % 3 == 1 ? iv + 1 + rl_rand_below(&rs, iv) : iv;

				if (!at_rate_run(&c, a, t0, step, k >= ARRAY_SIZE(starts) + 2, &rs))
					break;
			}
		}
	}
}

static const struct cfg window_cfgs[] = {
	{ FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ FW, "3", 3, 1, false, 0, -1, 0, 24 },
	{ FW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ FW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
	{ FW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },
	{ SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ SW, "3", 3, 1, false, 0, -1, 0, 24 },
	{ SW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ SW, "7", 7, 1, false, 0, -1, 3 * NSEC, 0 },
	{ SW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
	{ SW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },
	/* 24-bit counts and W > 2^40 ns: the 128-bit comparison (the others fit in 64). */
	{ SW, "10000", 10000, 1, false, 0, -1, 1200 * NSEC, 0 },
};

/*
 * Windows, from the record alone: in every window [kW, (k+1)W) what passed
 * before a packet is below L if it passed (so at most L packets, or L - 1 plus
 * the last frame in byte mode), and the sliding estimate
 * p (W - e) / W + c < L holds exactly for the packets that pass, and fails
 * for those dropped.
 */
static bool check_windows(const struct cfg *c, const struct rec *rc, size_t n)
{
	__u64 w = c->window ? c->window : NSEC, l = (__u64)((u128)c->num * w / c->den / NSEC);
	__u64 k = 0, cur = 0, prev = 0;
	char desc[256];

	for (size_t i = 0; i < n; i++) {
		__u64 ki = rc[i].t / w, e = rc[i].t % w;
		bool est;

		if (!i || ki != k) {
			prev = i && ki == k + 1 ? cur : 0;
			cur = 0;
			k = ki;
		}
		if (c->algo == FW)
			est = cur < l;
		else
			est = (u128)prev * (w - e) + (u128)cur * w < (u128)l * w;
		if (rc[i].pass != est) {
			rl_test_fail(
				__FILE__, __LINE__,
				"%s: packet at t=%llu (window %llu, %llu in it, %llu in the one before, L %llu): %s (RL_SEED=%llu)",
				cfg_str(c, desc, sizeof(desc)), (unsigned long long)rc[i].t,
				(unsigned long long)ki, (unsigned long long)cur,
				(unsigned long long)prev, (unsigned long long)l,
				rc[i].pass ? "passed" : "dropped", rl_test_seed());
			return false;
		}
		if (rc[i].pass)
			cur += rc[i].cost;
		if (!c->bytes && cur > l) {
			rl_test_fail(__FILE__, __LINE__,
				     "%s: %llu passed in window %llu, limit %llu",
				     cfg_str(c, desc, sizeof(desc)), (unsigned long long)cur,
				     (unsigned long long)ki, (unsigned long long)l);
			return false;
		}
	}
	return true;
}

TEST(algo_prop_windows)
{
	static struct pkt p[TRACE_LEN];
	static struct rec rc[TRACE_LEN];
	__u64 rs = seed_for(5);

	for (size_t c = 0; c < ARRAY_SIZE(window_cfgs); c++) {
		for (int r = 0; r < 12; r++) {
			size_t n;

			gen_trace(&rs, &window_cfgs[c], p, TRACE_LEN, gen_start(&rs), r % 4 == 3);
			for (unsigned int src = 0; src < NSRC; src++) {
				n = record(&window_cfgs[c], p, TRACE_LEN, src, rc);
				if (!check_windows(&window_cfgs[c], rc, n))
					return;
			}
		}
	}
}

/*
 * The sliding estimate's two comparisons, 64-bit (when the products fit) and
 * 128-bit, against exact arithmetic on random states and on exact ties
 * (p (W - e) = (L - c) W: a tie drops), which random traces rarely meet.
 */
TEST(algo_sliding_compare_paths)
{
	static const char *const pols[][7] = {
		{ "--algo", "sliding-window", "--rate", "1000", "--window", "1s", NULL },
		{ "--algo", "sliding-window", "--rate", "10000", "--window", "1200s", NULL },
		{ "--algo", "sliding-window", "--rate", "16mbyte", "--window", "1s", NULL },
	};
	__u64 rs = seed_for(11);
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(pols); i++) {
		struct rl_params p;
		__u64 w, l, cmax;
		int ties = 0;

		if (!ASSERT_OK(policy_try(pols[i], &p, err, sizeof(err)), err))
			return;
		w = p.window_ns;
		l = p.limit;
		cmax = (1ULL << p.cnt_bits) - 1;
		for (int n = 0; n < 200000; n++) {
			__u64 k = 1000 + rl_rand_below(&rs, 1000000), e, prev, cur, next = 0, st;
			bool tie = n % 4 == 0, want;
			int got;

			cur = rl_rand_below(&rs, l);
			if (tie) {
				/* e = W / 2 (W is even here) and prev = 2 (L - cur). */
				e = w / 2;
				prev = 2 * (l - cur);
				if (prev > cmax)
					continue;
				ties++;
			} else {
				e = rl_rand_below(&rs, w);
				prev = rl_rand_below(&rs, cmax + 1);
			}
			st = ((((k & p.id_mask) << p.cnt_bits) | prev) << p.cnt_bits) | cur;
			want = (u128)prev * (w - e) < (u128)(l - cur) * w;
			got = rl_step(&p, st, k * w + e, 1, &next);
			if (!ASSERT_EQ(got, want, pols[i][5]) ||
			    (got && !ASSERT_EQ(next, st + 1, "the count goes up by the cost")))
				return;
		}
		printf("    %s per %s: %d ties, %s comparison\n", pols[i][3], pols[i][5], ties,
		       w >> (64 - p.cnt_bits) ? "128-bit" : "64-bit");
		if (!ASSERT_TRUE(ties > 1000, "ties were checked"))
			return;
	}
}

/*
 * A packet whose clock read comes from just before a window boundary, against
 * a state that another CPU has already moved into the next window: it is
 * counted in that window (here: dropped, the window being full) and the state
 * keeps it, instead of going back a window and restarting the count.
 */
TEST(algo_window_state_ahead)
{
	static const char *const pols[][7] = {
		{ "--algo", "fixed-window", "--rate", "10", "--window", "1s", NULL },
		{ "--algo", "sliding-window", "--rate", "10", "--window", "1s", NULL },
	};
	char err[256];

	for (size_t i = 0; i < ARRAY_SIZE(pols); i++) {
		const __u64 k = 1000, w = NSEC;
		struct rl_params p;
		__u64 st, next = 0;
		int passed = 0;

		if (!ASSERT_OK(policy_try(pols[i], &p, err, sizeof(err)), err))
			return;
		st = rl_initial_state(&p, (k + 1) * w);
		/* Window k + 1 filled: 10 packets from its start on. */
		for (int n = 0; n < 20; n++) {
			if (rl_step(&p, st, (k + 1) * w + (__u64)n, 1, &next)) {
				st = next;
				passed++;
			}
		}
		if (!ASSERT_EQ(passed, 10, pols[i][1]))
			return;
		/* A stale clock: 1 ns before the boundary, in window k. */
		if (!ASSERT_EQ(rl_step(&p, st, (k + 1) * w - 1, 1, &next), 0, pols[i][1]))
			return;
		/* And back on time, window k + 1 is still full. */
		if (!ASSERT_EQ(rl_step(&p, st, (k + 1) * w + 100, 1, &next), 0, pols[i][1]))
			return;
	}
}

/* ---------------------------------------------------------------------------
 * Rate accuracy: overload a source at 3x its rate for a long simulated time;
 * what passes must be r t + b (and one packet more for gcra) within 1e-4.
 */
static const struct acc acc_cfgs[] = {
	{ "1", 1, 1, false },
	{ "1.5", 3, 2, false },
	{ "3", 3, 1, false },
	{ "7", 7, 1, false },
	{ "129", 129, 1, false },
	{ "999.999", 999999, 1000, false },
	{ "12345678", 12345678, 1, false },
	{ "33333333.333", 33333333333ULL, 1000, false },
	{ "73mpps", 73000000, 1, false },
	{ "99999999", 99999999, 1, false },
	{ "100mpps", 100000000, 1, false },
	{ "1kbit", 125, 1, true },
	{ "1001bit", 1001, 8, true },
	{ "56kbit", 7000, 1, true },
	{ "1.544mbit", 193000, 1, true },
	{ "12345.678kbit", 12345678, 8, true },
	{ "10gbit", 1250000000, 1, true },
	{ "100gbit", 12500000000ULL, 1, true },
	{ "399999999999bit", 399999999999ULL, 8, true },
	{ "400gbit", 50000000000ULL, 1, true },
};

TEST(algo_rate_accuracy)
{
	const size_t npkt = 150000;
	__u64 rs = seed_for(6);

	for (size_t i = 0; i < ARRAY_SIZE(acc_cfgs); i++) {
		const struct acc *a = &acc_cfgs[i];
		const char *rate = a->rate;
		__u32 len = a->bytes ? (a->num / a->den < 10000 ? 64 : 1500) : 1;
		u128 d = (u128)a->den * NSEC;
		__u64 iv = (__u64)(d * len / (3 * (u128)a->num));

		if (!iv)
			iv = 1;
		for (int algo = TB; algo <= GCRA; algo++) {
			const struct cfg c = { algo,	    rate, a->num, a->den, a->bytes,
					       10ULL * len, -1,	  0,	  0 };
			__u64 t0 = rl_rand(&rs) >> 3, t = t0, passed = 0;
			long double want, ratio;
			struct rl_sim s;

			if (!cfg_sim(&c, &s))
				return;
			for (size_t j = 0; j < npkt; j++, t += iv)
				passed += core_pkt(&s, 0, t, len) == 1 ? (a->bytes ? len : 1) : 0;
			rl_sim_free(&s);
			t -= iv;
			want = (long double)a->num * (t - t0) / ((long double)a->den * NSEC) +
			       c.burst + (algo == GCRA ? len : 0);
			ratio = passed / want;
			if (!ASSERT_TRUE(ratio > 1 - 1e-4L && ratio < 1 + 1e-4L, "rate accuracy"))
				fprintf(stderr,
					"    %s --rate %s: passed %llu, expected r t + b = %.1Lf (ratio %.8Lf) over %llu ns from t=%llu\n",
					algo_str[algo], rate, (unsigned long long)passed, want,
					ratio, (unsigned long long)(t - t0),
					(unsigned long long)t0);
		}
	}
}
