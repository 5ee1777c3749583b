// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Policies (user/lib/policy.c): the fixed point rl_params_init() gives the core
 * for each rate, and the options and policies refused, with a message that
 * says why, or accepted at the edges.
 */
#include <stdio.h>
#include "algo_model.h"
#include "test.h"

/*
 * The fixed point the core is given for rates it does not hold exactly, as
 * rl_algo.h documents: below 10^9 cost units per second between half a vt
 * and one vt per ns (ticks of at most 2 ns, and vt wraps no sooner than the
 * ns clock); above, unit_cost 1 and at most 128 vt per ns; and a relative
 * rate error under 1e-15.
 */
TEST(policy_params_scale)
{
	static const struct acc rates[] = {
		{ "3", 3, 1, false },
		{ "7", 7, 1, false },
		{ "13", 13, 1, false },
		{ "0.000000001", 1, 1000000000, false },
		{ "1.000000001", 1000000001, 1000000000, false },
		{ "129", 129, 1, false },
		{ "999.999", 999999, 1000, false },
		{ "12345678", 12345678, 1, false },
		{ "73mpps", 73000000, 1, false },
		{ "999999999", 999999999, 1, false },
		{ "1000000001", 1000000001, 1, false },
		{ "1001bit", 1001, 8, true },
		{ "12kbit", 1500, 1, true },
		{ "137byte", 137, 1, true },
		{ "10gbit", 1250000000, 1, true },
		{ "399999999999bit", 399999999999ULL, 8, true },
		{ "1tbit", 125000000000ULL, 1, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rates); i++) {
		const char *opts[] = { "--rate", rates[i].rate, "--burst", "1", NULL };
		const struct cfg c = {
			TB, rates[i].rate, rates[i].num, rates[i].den, false, 1, -1, 0, 0
		};
		u128 d = (u128)rates[i].den * NSEC, num = rates[i].num;
		char err[RL_ERRLEN];
		struct rl_params p;
		long double e;

		if (!ASSERT_OK(policy_try(opts, &p, err, sizeof(err)), rates[i].rate) ||
		    params_exact(&c, &p))
			continue;
		if (num < d) {
			ASSERT_LE(p.vt_mult, 1ULL << RL_VT_SHIFT, "at most one vt per ns");
			ASSERT_LE(1ULL << (RL_VT_SHIFT - 1), p.vt_mult, "ticks of at most 2 ns");
		} else {
			ASSERT_EQ(p.unit_cost, 1, rates[i].rate);
			ASSERT_LE(p.vt_mult, (__u64)RL_VT_PER_NS_MAX << RL_VT_SHIFT, rates[i].rate);
		}
		/* (vt_mult / 2^56 / unit_cost) / (num / d) - 1 */
		e = (long double)p.vt_mult * (long double)d /
			    ((long double)num * (long double)p.unit_cost *
			     (long double)(1ULL << RL_VT_SHIFT)) -
		    1;
		if (!ASSERT_TRUE(e > -1e-15L && e < 1e-15L, rates[i].rate))
			fprintf(stderr, "    relative rate error %Lg\n", e);
	}
}

/*
 * Rates whose cost unit lasts a whole number of ns (or, above 10^9 per
 * second, a whole number of cost units per ns), to be matched packet for
 * packet: the fixed point must hold each exactly (a whole number of vt per
 * ns, and vt per ns / unit_cost = the rate per ns). 3/s and 7/s are not among
 * them: exact, they would need vt of 1/3 ns and a state that wraps before the
 * clock does (rl_algo.h).
 */
TEST(policy_params_brief_rates_exact)
{
	static const struct acc rates[] = {
		{ "1", 1, 1, false },
		{ "2.5", 5, 2, false },
		{ "40", 40, 1, false },
		{ "10", 10, 1, false },
		{ "100", 100, 1, false },
		{ "1000", 1000, 1, false },
		{ "12.5", 25, 2, false },
		{ "10kbit", 1250, 1, true },
		{ "100mbit", 12500000, 1, true },
		{ "1gbit", 125000000, 1, true },
		{ "400gbit", 50000000000ULL, 1, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rates); i++) {
		const char *opts[] = { "--rate", rates[i].rate, NULL };
		const struct cfg c = {
			TB, rates[i].rate, rates[i].num, rates[i].den, false, 1, -1, 0, 0
		};
		char err[RL_ERRLEN];
		struct rl_params p;

		if (ASSERT_OK(policy_try(opts, &p, err, sizeof(err)), rates[i].rate) &&
		    !ASSERT_TRUE(params_exact(&c, &p), rates[i].rate))
			fprintf(stderr, "    --rate %s: vt_mult %#llx, unit_cost %llu\n",
				rates[i].rate, (unsigned long long)p.vt_mult,
				(unsigned long long)p.unit_cost);
	}
}

/* A configuration refused, with a message that says why. */
struct refusal {
	const char *opts[12];
	const char *why[2]; /* substrings of the message */
};

static void check_refusals(const struct refusal *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char err[RL_ERRLEN], cmd[256] = "";
		size_t len = 0;

		for (int k = 0; r[i].opts[k]; k++)
			len += snprintf(cmd + len, sizeof(cmd) - len, " %s", r[i].opts[k]);
		if (!ASSERT_TRUE(policy_try(r[i].opts, NULL, err, sizeof(err)) != 0, cmd))
			continue;
		for (int k = 0; k < 2 && r[i].why[k]; k++)
			ASSERT_CONTAINS(err, r[i].why[k], cmd);
	}
}

TEST(policy_refuse_options)
{
	static const struct refusal r[] = {
		{ { "--rate", "0", NULL }, { "--rate", "zero" } },
		{ { "--rate", "0.000", NULL }, { "--rate", "zero" } },
		{ { "--rate", "0kbit", NULL }, { "--rate", "zero" } },
		{ { "--rate", "10furlongs", NULL }, { "--rate", "unit" } },
		{ { "--rate", "10 kbit", NULL }, { "--rate", "unit" } },
		{ { "--rate", "1e6", NULL }, { "--rate", "unit" } },
		{ { "--rate", "kbit", NULL }, { "--rate", "not a rate" } },
		{ { "--rate", "", NULL }, { "--rate", "not a rate" } },
		{ { "--rate", "-5", NULL }, { "--rate", "not a rate" } },
		{ { "--rate", "1.0000000001", NULL }, { "--rate", "decimals" } },
		{ { "--rate", "99999999999999999999", NULL }, { "--rate", NULL } },
		{ { "--rate", NULL }, { "--rate", "needs a value" } },
		{ { "--rate", "10", "--burst", NULL }, { "--burst", "needs a value" } },
		{ { "--rate", "10", "--burst", "0", NULL }, { "--burst", "range" } },
		{ { "--rate", "10", "--burst", "-1", NULL }, { "--burst", NULL } },
		{ { "--rate", "10", "--burst", "2x", NULL }, { "--burst", "whole number" } },
		{ { "--rate", "10", "--burst", "4611686018427387905", NULL },
		  { "--burst", "range" } },
		{ { "--rate", "10", "--algo", "leaky-bucket", NULL },
		  { "--algo", "leaky-bucket" } },
		{ { "--rate", "10", "--prefix4", "33", NULL }, { "--prefix4", "range" } },
		{ { "--rate", "10", "--prefix4", "-1", NULL }, { "--prefix4", NULL } },
		{ { "--rate", "10", "--prefix6", "129", NULL }, { "--prefix6", "range" } },
		{ { "--rate", "10", "--prefix6", "64bits", NULL }, { "--prefix6", NULL } },
		{ { "--rate", "10", "--initial", "x", NULL }, { "--initial", NULL } },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "999ns", NULL },
		  { "--window", "range" } },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "25h", NULL },
		  { "--window", "range" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--window", "0s", NULL },
		  { "--window", NULL } },
		{ { "--algo", "sliding-window", "--rate", "10", "--window", "1.5ns", NULL },
		  { "--window", "nanosecond" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--window", "10", NULL },
		  { "--window", "unit" } },
	};

	check_refusals(r, ARRAY_SIZE(r));
}

TEST(policy_refuse_policies)
{
	static const struct refusal r[] = {
		{ { "--algo", "gcra", NULL }, { "--rate", "required" } },
		{ { "--rate", "128000000001", NULL }, { "--rate", "too high" } },
		{ { "--rate", "200000000000", NULL }, { "--rate", "too high" } },
		{ { "--rate", "1.1tbit", NULL }, { "--rate", "too high" } },
		{ { "--algo", "gcra", "--rate", "129gbyte", NULL }, { "--rate", "too high" } },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "150ms", NULL },
		  { "whole", NULL } },
		{ { "--algo", "sliding-window", "--rate", "3", "--window", "100ms", NULL },
		  { "whole", NULL } },
		{ { "--algo", "fixed-window", "--rate", "12kbit", "--window", "1us", NULL },
		  { "whole", "bytes" } },
		{ { "--algo", "fixed-window", "--rate", "10", "--burst", "5", NULL },
		  { "--burst", "fixed-window" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--burst", "5", NULL },
		  { "--burst", "sliding-window" } },
		{ { "--algo", "sliding-window", "--rate", "10", "--initial", "5", NULL },
		  { "--initial", "sliding-window" } },
		{ { "--algo", "token-bucket", "--rate", "10", "--window", "1s", NULL },
		  { "--window", "token-bucket" } },
		{ { "--algo", "gcra", "--rate", "10", "--window", "1s", NULL },
		  { "--window", "gcra" } },
		{ { "--rate", "10", "--burst", "20", "--initial", "21", NULL },
		  { "--initial", "burst" } },
		{ { "--rate", "10", "--initial", "11", NULL }, { "--initial", "burst" } },
		{ { "--algo", "gcra", "--rate", "10", "--burst", "1", "--initial", "2", NULL },
		  { "--initial", "burst" } },
		{ { "--rate", "1", "--burst", "4611686018427387904", NULL },
		  { "--burst", "large" } },
		{ { "--rate", "0.000000001", "--burst", "10", NULL }, { "--burst", "large" } },
		{ { "--algo", "sliding-window", "--rate", "10gbyte", "--window", "1s", NULL },
		  { "--window", "sliding-window" } },
		{ { "--algo", "fixed-window", "--rate", "10gbyte", "--window", "24h", NULL },
		  { "--window", "fixed-window" } },
	};

	check_refusals(r, ARRAY_SIZE(r));
}

/* The spec's ceiling on rates, 128e9/s, for the window algorithms too. */
TEST(policy_refuse_rate_too_high_windows)
{
	static const struct refusal r[] = {
		{ { "--algo", "fixed-window", "--rate", "1000000000000", "--window", "1us", NULL },
		  { "--rate", NULL } },
		{ { "--algo", "sliding-window", "--rate", "1000000000000", "--window", "1us",
		    NULL },
		  { "--rate", NULL } },
	};

	check_refusals(r, ARRAY_SIZE(r));
}

/* The edges of what is accepted are accepted. */
TEST(policy_accept_edges)
{
	static const char *const ok[][12] = {
		{ "--rate", "128000000000", NULL },
		{ "--algo", "gcra", "--rate", "1tbit", NULL },
		{ "--rate", "0.000000001", NULL },
		{ "--rate", "1.000000001", NULL },
		{ "--rate", "10KBIT", NULL },
		{ "--rate=10", "--burst=20", "--initial=0", NULL },
		{ "--rate", "10", "--burst", "20", "--initial", "20", NULL },
		{ "--algo", "gcra", "--rate", "10", "--burst", "20", "--initial", "20", NULL },
		{ "--rate", "1", "--burst", "4000000000", NULL },
		{ "--rate", "10", "--prefix4", "0", "--prefix6", "0", NULL },
		{ "--rate", "10", "--prefix4", "32", "--prefix6", "128", NULL },
		{ "--algo", "fixed-window", "--rate", "1000000", "--window", "1us", NULL },
		{ "--algo", "fixed-window", "--rate", "1", "--window", "24h", NULL },
		{ "--algo", "sliding-window", "--rate", "10", "--window", "1.5s", NULL },
		{ "--algo", "sliding-window", "--rate", "10", "--window", "0.1s", NULL },
		{ "--algo", "sliding-window", "--rate", "1", "--window", "1m", NULL },
		{ "--algo", "fixed-window", "--rate", "12kbit", "--window", "2ms", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		char err[RL_ERRLEN];

		if (!ASSERT_OK(policy_try(ok[i], NULL, err, sizeof(err)), ok[i][1]))
			fprintf(stderr, "    refused: %s\n", err);
	}
}
