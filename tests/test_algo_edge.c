// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The rate core at its overflow and wrap edges: the top of the clock, idle
 * gaps of years and of whole vt-clock wraps, window ids coming round, the
 * largest burst accepted, frames longer than the burst. The spec and the
 * reference model: tests/lib/algo_model.h.
 */
#include <stdio.h>
#include <string.h>
#include "algo_model.h"
#include "test.h"

/* 2^63 and 2^64 - 1 ns: the clock crosses 2^63, and ends on the last ns. */
TEST(algo_edge_clock_top)
{
	const __u64 h = 1ULL << 63;
	/* The last whole window below 2^64: [18446744073 s, 2^64 - 1]. */
	const __u64 lastw = TOP / NSEC * NSEC;
	const struct hand_case cases[] = {
		{ "token-bucket across 2^63",
		  { TB, "10", 10, 1, false, 20, -1, 0, 0 },
		  STEPS({ h - 2 * NSEC, 64, 20, 5 }, { h - NSEC, 64, 10, 1 }, { h, 64, 10, 1 },
			{ h + 100 * MS - 1, 64, 0, 1 }, { h + 100 * MS, 64, 1, 1 }) },
		{ "token-bucket at 2^64 - 1",
		  { TB, "10", 10, 1, false, 20, -1, 0, 0 },
		  STEPS({ TOP - 2500 * MS, 64, 20, 5 }, { TOP - 2400 * MS, 64, 1, 1 },
			{ TOP - 1, 64, 20, 1 }, { TOP, 64, 0, 1 }) },
		{ "gcra at 2^64 - 1",
		  { GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
		  STEPS({ TOP - 3 * NSEC, 64, 20, 1 }, { TOP - 2 * NSEC, 64, 10, 1 },
			{ TOP - 2 * NSEC + 100 * MS - 1, 64, 1, 1 },
			{ TOP - 2 * NSEC + 100 * MS, 64, 0, 1 },
			{ TOP - 2 * NSEC + 100 * MS + 1, 64, 1, 1 },
			{ TOP, 64, 18, 1 }) }, /* 20.99999999 - 18.99999999 = 2 */
		/* 128e9/s is 128 vt per ns: the vt clock itself wraps many times below 2^64 ns. */
		{ "token-bucket 128e9/s at 2^64 - 1",
		  { TB, "128000000000", 128000000000ULL, 1, false, 128, -1, 0, 0 },
		  STEPS({ TOP - 10, 64, 128, 1 }, { TOP - 9, 64, 128, 1 }, { TOP, 64, 128, 0 }) },
		{ "gcra 400gbit at 2^64 - 1",
		  { GCRA, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 0 },
		  STEPS({ TOP - 3000, 65535, 1, 1 }, /* level 65535 */
			{ TOP - 2999, 65535, 1, 1 }, /* 65485 -> 131020 */
			{ TOP - 2999 + 1309, 65535, 0, 1 }, /* 65570 */
			{ TOP - 2999 + 1310, 65535, 1, 1 }, /* 65520 -> 131055 */
			{ TOP, 65535, 1, 1 }) }, /* 46605 */
		{ "fixed-window at 2^64 - 1",
		  { FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		  STEPS({ lastw - 1, 64, 10, 1 }, { lastw, 64, 10, 1 }, { TOP, 64, 0, 1 }) },
		{ "sliding-window at 2^64 - 1",
		  { SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		  STEPS({ lastw - 1, 64, 10, 1 }, { lastw, 64, 0, 1 },
			{ lastw + NSEC / 2, 64, 5, 1 },
			{ TOP, 64, 3, 1 }) }, /* 2.90448385 + 5..7 */
		{ "sliding-window across 2^63",
		  { SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		  STEPS({ h - 1, 64, 10, 1 }, { h, 64, 0, 1 }, { h + NSEC, 64, 9, 1 }) },
	};

	run_hand_cases(cases, ARRAY_SIZE(cases));
}

/*
 * Drain a bucket at @t0, idle for @gap, then burst: a full bucket again (the
 * gap is far longer than b / r). Returns false after reporting.
 */
static bool idle_then_burst(const struct cfg *c, __u64 t0, __u64 gap, __u32 len, const char *what)
{
	__u64 b = c->burst ? c->burst : default_burst(c), cost = c->bytes ? len : 1;
	/* A full token bucket takes floor(b / cost); gcra from empty takes ceil(b / cost). */
	__u64 want = c->algo == TB ? b / cost : (b + cost - 1) / cost;
	__u64 n = 0, drain = 0;
	char desc[256];
	struct rl_sim s;

	if (!cfg_sim(c, &s))
		return false;
	while (core_pkt(&s, 0, t0, len) == 1 && drain < want + 10)
		drain++;
	while (core_pkt(&s, 0, t0 + gap, len) == 1 && n < want + 10)
		n++;
	rl_sim_free(&s);
	if (drain != want || n != want) {
		rl_test_fail(
			__FILE__, __LINE__,
			"%s: %s: %llu passed at t=%llu and %llu after %llu ns (%.2f years) idle; expected %llu both times",
			what, cfg_str(c, desc, sizeof(desc)), (unsigned long long)drain,
			(unsigned long long)t0, (unsigned long long)n, (unsigned long long)gap,
			(double)gap / YEAR_NS, (unsigned long long)want);
		return false;
	}
	return true;
}

/* The largest --burst rl_params_init() accepts for @c, by bisection; 0 if none. */
static __u64 max_burst(const struct cfg *c)
{
	__u64 lo = 0, hi = 1ULL << 62;

	while (lo < hi) {
		__u64 mid = lo + (hi - lo + 1) / 2;
		struct cfg t = *c;
		char err[RL_ERRLEN];
		struct optv o;

		t.burst = mid;
		cfg_opts(&t, &o);
		if (policy_try((const char *const *)o.argv, NULL, err, sizeof(err)))
			hi = mid - 1;
		else
			lo = mid;
	}
	return lo;
}

static const struct cfg idle_cfgs[] = {
	{ TB, "10", 10, 1, false, 20, -1, 0, 0 },
	{ TB, "1", 1, 1, false, 5, -1, 0, 0 },
	{ TB, "3", 3, 1, false, 3, -1, 0, 0 },
	{ TB, "13", 13, 1, false, 13, -1, 0, 0 },
	{ TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
	{ TB, "127", 127, 1, false, 127, -1, 0, 0 },
	{ TB, "129", 129, 1, false, 129, -1, 0, 0 },
	{ TB, "12345678", 12345678, 1, false, 1000, -1, 0, 0 },
	{ TB, "128000000000", 128000000000ULL, 1, false, 1000, -1, 0, 0 },
	{ TB, "1001bit", 1001, 8, true, 1522, -1, 0, 0 },
	{ TB, "400gbit", 50000000000ULL, 1, true, 65535 * 100, -1, 0, 0 },
	{ TB, "399999999999bit", 399999999999ULL, 8, true, 65535 * 100, -1, 0, 0 },
	{ GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
	{ GCRA, "13", 13, 1, false, 13, -1, 0, 0 },
	{ GCRA, "127", 127, 1, false, 127, -1, 0, 0 },
	{ GCRA, "12345678", 12345678, 1, false, 1000, -1, 0, 0 },
	{ GCRA, "1001bit", 1001, 8, true, 1522, -1, 0, 0 },
	{ GCRA, "399999999999bit", 399999999999ULL, 8, true, 65535 * 100, -1, 0, 0 },
};

/* A source idle for a year, and for three: its bucket is full (its queue empty). */
TEST(algo_edge_idle_years)
{
	static const __u64 starts[] = { 0, 1000 * NSEC, 1ULL << 62, (1ULL << 63) - YEAR_NS };

	for (size_t i = 0; i < ARRAY_SIZE(idle_cfgs); i++) {
		__u32 len = idle_cfgs[i].bytes ? 1500 : 64;

		for (size_t k = 0; k < ARRAY_SIZE(starts); k++) {
			if (!idle_then_burst(&idle_cfgs[i], starts[k], YEAR_NS, len, "1 year") ||
			    !idle_then_burst(&idle_cfgs[i], starts[k], 3 * YEAR_NS, len, "3 years"))
				break;
		}
	}
	/* The same with the largest burst accepted (the largest TAT lead). */
	for (size_t i = 0; i < ARRAY_SIZE(idle_cfgs); i++) {
		struct cfg c = idle_cfgs[i];
		__u64 mb = max_burst(&c);

		if (!c.bytes || !ASSERT_TRUE(mb > 0, "some burst is accepted"))
			continue;
		/* Bytes only: the burst in 65535-byte frames stays countable. */
		c.burst = mb;
		if (mb / 65535 > 200000)
			continue;
		if (!idle_then_burst(&c, 0, 2 * YEAR_NS, 65535, "largest burst, 2 years") ||
		    !idle_then_burst(&c, 12345, 3 * YEAR_NS, 65535, "largest burst, 3 years"))
			break;
	}
}

/*
 * Any gap, as the spec says: 4, 10, 100 and 200 years, with the clock staying
 * below 2^63 ns, and exactly the gaps where the core's vt clock (vt = now x
 * vt_mult / 2^56, mod 2^64) has gone once or twice around, which the state
 * cannot tell from no gap at all. @wide: the policies with more than one vt
 * per ns, or the others.
 */
static void idle_any_gap(bool wide)
{
	for (size_t i = 0; i < ARRAY_SIZE(idle_cfgs); i++) {
		const struct cfg *c = &idle_cfgs[i];
		__u32 len = c->bytes ? 1500 : 64;
		const __u64 t0 = NSEC, room = (1ULL << 63) - t0;
		struct rl_sim s;
		u128 wrap;
		__u64 gaps[7];

		if (!cfg_sim(c, &s))
			return;
		/* ns for 2^64 vt: 2^120 / vt_mult. */
		wrap = ((u128)1 << 120) / s.params.vt_mult;
		rl_sim_free(&s);
		if ((s.params.vt_mult > (1ULL << RL_VT_SHIFT)) != wide)
			continue;
		if (wide) {
			/*
			 * Above 10^9 cost units per second: gaps read right up
			 * to (2^64 - ahead_max) vt, as rl_algo.h documents.
			 */
			u128 inside = ((((u128)1 << 64) - s.params.ahead_max) << RL_VT_SHIFT) /
					      s.params.vt_mult -
				      1000;

			memset(gaps, 0, sizeof(gaps));
			gaps[0] = YEAR_NS;
			gaps[1] = 3 * YEAR_NS < inside ? 3 * YEAR_NS : 0;
			gaps[2] = inside <= room ? (__u64)inside : 0;
		} else {
			gaps[0] = 4 * YEAR_NS;
			gaps[1] = 10 * YEAR_NS;
			gaps[2] = 100 * YEAR_NS;
			gaps[3] = 200 * YEAR_NS;
			gaps[4] = wrap <= room ? (__u64)wrap : 0;
			gaps[5] = wrap <= room ? (__u64)wrap - 1000 : 0;
			gaps[6] = 2 * wrap + 1 <= room ? (__u64)(2 * wrap) + 1 : 0;
		}
		for (size_t k = 0; k < ARRAY_SIZE(gaps); k++) {
			if (gaps[k] && !idle_then_burst(c, t0, gaps[k], len, "idle"))
				break;
		}
	}
}

/* At most one vt per ns: rl_algo.h says any gap is read right, up to 2^63 ns. */
TEST(algo_edge_idle_any_gap)
{
	idle_any_gap(false);
}

/*
 * More than one vt per ns (byte rates above 8 Gbit/s): rl_algo.h trades
 * range for sub-ns precision there; every gap up to the documented bound,
 * (2^64 - ahead_max) vt (4.5 years and more), must be read right.
 */
TEST(algo_edge_idle_any_gap_fine_vt)
{
	idle_any_gap(true);
}

/*
 * Windows after long gaps: a fresh window whatever the gap, including exactly
 * 2^16 and 2^24 windows (window ids once kept that many bits), and a year.
 */
static void window_gaps(const struct cfg *cfgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct cfg *c = &cfgs[i];
		__u64 w = c->window, l = (__u64)((u128)c->num * w / c->den / NSEC);
		/* Fill with the largest frames: ceil(L / len) of them pass. */
		__u32 len = c->bytes ? 65535 : 64;
		__u64 want = c->bytes ? (l + len - 1) / len : l;
		__u64 wins[] = { 2,
				 3,
				 1ULL << 16,
				 (1ULL << 16) + 1,
				 (1ULL << 24),
				 (1ULL << 24) + 1,
				 YEAR_NS / w,
				 3 * YEAR_NS / w,
				 5 * YEAR_NS / w };

		for (size_t k = 0; k < ARRAY_SIZE(wins); k++) {
			__u64 t0 = 7 * w, t1;
			struct rl_sim s;
			unsigned int a = 0, b = 0;

			if ((u128)t0 + (u128)wins[k] * w > TOP - w)
				continue;
			t1 = t0 + wins[k] * w;
			if (!cfg_sim(c, &s))
				return;
			/* Fill window 7, then come back @wins windows later, at its start. */
			while (core_pkt(&s, 0, t0, len) == 1 && a <= want)
				a++;
			while (core_pkt(&s, 0, t1, len) == 1 && b <= want)
				b++;
			rl_sim_free(&s);
			if (!ASSERT_EQ(a, want, "first window full") ||
			    !ASSERT_EQ(b, want, "a fresh window after the gap")) {
				fprintf(stderr,
					"    %s --rate %s --window %lluns: idle %llu windows (%llu s)\n",
					algo_str[c->algo], c->rate, (unsigned long long)w,
					(unsigned long long)wins[k],
					(unsigned long long)(wins[k] * w / NSEC));
				break;
			}
		}
	}
}

TEST(algo_edge_window_gaps)
{
	static const struct cfg cfgs[] = {
		{ FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		{ FW, "1000000", 1000000, 1, false, 0, -1, 1000, 0 },
		{ FW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
		{ FW, "10mbyte", 10000000, 1, true, 0, -1, NSEC, 0 },
		{ SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		{ SW, "1000000", 1000000, 1, false, 0, -1, 1000, 0 },
		{ SW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
		{ SW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
	};

	window_gaps(cfgs, ARRAY_SIZE(cfgs));
}

/*
 * Sliding windows with large byte limits: two counts of 24 bits leave 16 bits
 * of window id, which comes round every 65536 windows. The issue asks the
 * window algorithms for a documented layout and wrap: rl_algo.h and the
 * README say a source idle for exactly a multiple of 2^id_bits windows finds
 * its old counts. Check both sides of that: every other gap gives a fresh
 * window, and the wrap itself does what the documentation says.
 */
TEST(algo_edge_window_gaps_large_limits)
{
	static const struct cfg cfgs[] = {
		{ SW, "10mbyte", 10000000, 1, true, 0, -1, NSEC, 0 },
		{ SW, "16mbyte", 16000000, 1, true, 0, -1, NSEC, 0 },
		{ SW, "1gbyte", 1000000000, 1, true, 0, -1, 10 * MS, 0 },
	};
	const __u32 len = 65535;

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		const struct cfg *c = &cfgs[i];
		__u64 w = c->window, l = (__u64)((u128)c->num * w / c->den / NSEC);
		__u64 want = (l + len - 1) / len, period;
		struct rl_sim s;

		if (!cfg_sim(c, &s))
			return;
		period = s.params.id_mask + 1;
		rl_sim_free(&s);
		ASSERT_TRUE(period >= 1ULL << 16, "at least 16 bits of window id");
		{
			const __u64 wins[] = { 2,      3,	   1000,	   period - 1,
					       period, period + 1, 2 * period - 1, 2 * period };
			/*
			 * Fresh, but at the multiples of the period, the window
			 * after (where the old window reads as the previous one)
			 * and the window before (where it reads as the next one,
			 * that another CPU moved the source into: rl_window_ahead()):
			 * the documented wrap.
			 */
			const bool wraps[] = { false, false, false, true, true, true, true, true };

			for (size_t k = 0; k < ARRAY_SIZE(wins); k++) {
				__u64 t0 = 7 * w, t1 = t0 + wins[k] * w;
				unsigned int a = 0, b = 0;

				if (!cfg_sim(c, &s))
					return;
				while (core_pkt(&s, 0, t0, len) == 1 && a <= want)
					a++;
				while (core_pkt(&s, 0, t1, len) == 1 && b <= want)
					b++;
				rl_sim_free(&s);
				if (!ASSERT_EQ(a, want, "first window full") ||
				    !ASSERT_EQ(b, wraps[k] ? 0 : want,
					       wraps[k] ? "the documented wrap: the old count" :
							  "a fresh window after the gap")) {
					fprintf(stderr,
						"    sliding-window --rate %s --window %lluns: idle %llu windows, period %llu\n",
						c->rate, (unsigned long long)w,
						(unsigned long long)wins[k],
						(unsigned long long)period);
					break;
				}
			}
		}
	}
}

/*
 * The largest burst accepted: accepted, one more refused with a message about
 * --burst; and the core agrees with the model at that burst, from near empty
 * and near full, over gaps up to a century.
 */
TEST(algo_edge_max_burst)
{
	static const struct cfg cfgs[] = {
		{ TB, "1", 1, 1, false, 0, -1, 0, 0 },
		{ TB, "10", 10, 1, false, 0, -1, 0, 0 },
		{ TB, "12345678", 12345678, 1, false, 0, -1, 0, 0 },
		{ TB, "100mpps", 100000000, 1, false, 0, -1, 0, 0 },
		{ TB, "1kbit", 125, 1, true, 0, -1, 0, 0 },
		{ TB, "1001bit", 1001, 8, true, 0, -1, 0, 0 },
		{ TB, "400gbit", 50000000000ULL, 1, true, 0, -1, 0, 0 },
		{ GCRA, "1", 1, 1, false, 0, -1, 0, 0 },
		{ GCRA, "10", 10, 1, false, 0, -1, 0, 0 },
		{ GCRA, "100mpps", 100000000, 1, false, 0, -1, 0, 0 },
		{ GCRA, "1001bit", 1001, 8, true, 0, -1, 0, 0 },
		{ GCRA, "400gbit", 50000000000ULL, 1, true, 0, -1, 0, 0 },
	};
	static struct pkt p[TRACE_LEN];
	__u64 rs = seed_for(7);

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		struct cfg c = cfgs[i];
		char err[RL_ERRLEN];
		struct optv o;
		__u64 mb = max_burst(&c);

		if (!ASSERT_TRUE(mb >= (c.bytes ? 65535 : 1), "a useful burst is accepted"))
			continue;
		c.burst = mb + 1;
		cfg_opts(&c, &o);
		if (mb < (1ULL << 62) &&
		    ASSERT_TRUE(policy_try((const char *const *)o.argv, NULL, err, sizeof(err)),
				"one more than the largest burst is refused"))
			ASSERT_CONTAINS(err, "--burst", "the message names --burst");
		c.burst = mb;
		for (int r = 0; r < 4; r++) {
			__u64 t;

			/* From nearly empty and from nearly full. */
			if (r < 2)
				c.initial = 3LL * r;
			else
				c.initial = (long long)(mb - 3ULL * (unsigned int)(r - 2));
			gen_trace(&rs, &c, p, TRACE_LEN, rl_rand_below(&rs, 1ULL << 60), 0);
			/*
			 * Gaps up to 3 years (longer ones are algo_edge_idle_any_gap's):
			 * at the largest burst the TAT leads the clock by up to 2^62 vt.
			 */
			t = p[0].t;
			p[0].src = 0;
			for (size_t j = 1; j < TRACE_LEN; j++) {
				__u64 gap = p[j].t - p[j - 1].t;

				p[j].src = 0; /* one source: its idle time is the gap */
				if (!rl_rand_below(&rs, 50) || gap > 3 * YEAR_NS)
					gap = rl_rand_below(&rs, 3 * YEAR_NS);
				t = gap > TOP - t ? TOP : t + gap;
				p[j].t = t;
			}
			if (!diff_trace(&c, p, TRACE_LEN, "largest burst"))
				break;
		}
	}
}

/* Byte mode: a frame longer than a token bucket's burst never passes. */
TEST(algo_edge_long_frame)
{
	static const struct cfg cfgs[] = {
		{ TB, "12kbit", 1500, 1, true, 1000, -1, 0, 0 },
		{ TB, "400gbit", 50000000000ULL, 1, true, 1499, -1, 0, 0 },
		{ TB, "1001bit", 1001, 8, true, 1499, -1, 0, 0 },
	};
	__u64 rs = seed_for(8);

	for (size_t i = 0; i < ARRAY_SIZE(cfgs); i++) {
		struct rl_sim s;
		__u64 t = rl_rand(&rs) >> 2;
		unsigned int n = 0;

		if (!cfg_sim(&cfgs[i], &s))
			return;
		for (int j = 0; j < 2000; j++) {
			__u64 gap = j % 10 ? rl_rand_below(&rs, 1ULL << 40) : YEAR_NS;

			n += core_pkt(&s, 0, t, (__u32)cfgs[i].burst + 1 + (j % 3 ? 0 : j)) == 1;
			t += gap;
		}
		ASSERT_EQ(n, 0, cfgs[i].rate);
		/* ...while a frame of exactly the burst passes into a full bucket. */
		ASSERT_EQ(core_pkt(&s, 0, t + YEAR_NS, (__u32)cfgs[i].burst), 1, "len = burst");
		rl_sim_free(&s);
	}
}
