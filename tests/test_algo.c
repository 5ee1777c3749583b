// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The rate core (include/rl_algo.h) on hand-computed cases and, packet for
 * packet, against the reference model on random traces (tests/lib/algo_model.h
 * has the spec and the model). Properties: test_algo_props.c; overflow and
 * wrap edges: test_algo_edge.c; policy parsing and refusals: test_policy.c.
 */
#include "algo_model.h"
#include "test.h"

/* The case from the spec: after 5 s idle, 30 packets spread evenly over 20 ms. */
static unsigned int known_case(const struct cfg *c, __u64 t0)
{
	unsigned int passed = 0;
	struct rl_sim s;

	if (!cfg_sim(c, &s))
		return ~0U;
	/* The source's first packet, 5 s earlier, makes the 5 s an idle gap. */
	core_pkt(&s, 0, t0, 64);
	for (int i = 0; i < 30; i++)
		passed += core_pkt(&s, 0, t0 + 5 * NSEC + i * 20 * MS / 29, 64);
	rl_sim_free(&s);
	return passed;
}

TEST(algo_known_case)
{
	static const __u64 starts[] = { 0, 123456789, 1ULL << 62, (1ULL << 63) - 2 * NSEC,
					TOP - 6 * NSEC };
	/* Windows start on a window: the 5 s-earlier packet may share none with the 30. */
	static const struct {
		const char *what;
		struct cfg c;
		unsigned int passed;
	} cases[] = {
		{ "token-bucket 10/s burst 20", { TB, "10", 10, 1, false, 20, -1, 0, 0 }, 20 },
		{ "gcra 10/s burst 20", { GCRA, "10", 10, 1, false, 20, -1, 0, 0 }, 21 },
		{ "fixed-window 10 per 1s", { FW, "10", 10, 1, false, 0, -1, NSEC, 0 }, 10 },
		{ "sliding-window 10 per 1s", { SW, "10", 10, 1, false, 0, -1, NSEC, 0 }, 10 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(starts); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
			const struct cfg *c = &cases[k].c;
			__u64 t0 = c->window ? starts[i] - starts[i] % c->window : starts[i];

			ASSERT_EQ(known_case(c, t0), cases[k].passed, cases[k].what);
		}
	}
}

/* Token bucket and gcra, in packets. */
TEST(algo_hand_buckets)
{
	const struct hand_case cases[] = {
		/* 10/s, burst 20: one token per 100 ms exactly. */
		{ "10/s burst 20",
		  { TB, "10", 10, 1, false, 20, -1, 0, 0 },
		  STEPS({ 0, 64, 20, 1 }, /* starts full */
			{ 100 * MS - 1, 64, 0, 1 }, /* 0.99999999 token */
			{ 100 * MS, 64, 1, 1 }, /* exactly 1 */
			{ 300 * MS, 64, 2, 1 }, /* exactly 2 more */
			{ 300 * MS + 99999999, 64, 0, 1 },
			{ 2300 * MS - 1, 64, 19, 1 }, /* 19.99999999 */
			{ 2300 * MS, 64, 1, 1 },
			{ 60000 * MS, 64, 20, 5 }) }, /* long idle: capped at 20 */
		/*
		 * 3/s: a token every 333333333.3 ns, so the core runs on its vt
		 * clock (ticks under 2 ns): every answer here is 3 ns or more from
		 * its threshold.
		 */
		{ "3/s burst 3",
		  { TB, "3", 3, 1, false, 3, -1, 0, 0 },
		  STEPS({ 7 * NSEC, 64, 3, 1 }, { 7 * NSEC + 333333330, 64, 0, 1 }, /* 0.99999999 */
			{ 7 * NSEC + 333333337, 64, 1, 1 }, /* 1.000000011 */
			{ 8 * NSEC + 10, 64, 2, 1 }, /* 0.000000011 + 2.000000019 */
			{ 9 * NSEC - 20, 64, 2, 1 }, /* 0.00000003 + 2.99999991 */
			{ 10 * NSEC + 100, 64, 3, 1 }) },
		/* 12.5/s, burst 1: one token per 80 ms. */
		{ "12.5/s burst 1",
		  { TB, "12.5", 25, 2, false, 1, -1, 0, 0 },
		  STEPS({ 1, 64, 1, 1 }, { 80 * MS, 64, 0, 1 }, { 80 * MS + 1, 64, 1, 1 },
			{ 160 * MS + 1, 64, 1, 1 }, { 160 * MS + 1 + 80 * MS * 1000, 64, 1, 1 }) },
		/* 100 Mpps, burst 1: a token every 10 ns. */
		{ "100 Mpps burst 1",
		  { TB, "100mpps", 100000000, 1, false, 1, -1, 0, 0 },
		  STEPS({ 1000, 64, 1, 1 }, { 1009, 64, 0, 1 }, { 1010, 64, 1, 1 },
			{ 1030, 64, 1, 1 }, { 1039, 64, 0, 1 }, { 1040, 64, 1, 0 }) },
		/* gcra 10/s, burst 20: the level drains 1 per 100 ms; pass iff level < 20. */
		{ "gcra 10/s burst 20",
		  { GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
		  STEPS({ 0, 64, 20, 1 }, /* levels 0..19 pass, 20 does not */
			{ 100 * MS - 1, 64, 1, 1 }, /* 19.00000001 < 20 -> 20.00000001 */
			{ 100 * MS, 64, 0, 1 }, /* 20 exactly: not below the burst */
			{ 100 * MS + 1, 64, 1, 1 }, /* 19.99999999 -> 20.99999999 */
			{ 2100 * MS + 1, 64, 20, 1 }) }, /* 0.99999999 .. 19.99999999 pass */
		/* gcra burst 1: a packet only into an empty queue, or nearly so. */
		{ "gcra 1/s burst 1",
		  { GCRA, "1", 1, 1, false, 1, -1, 0, 0 },
		  STEPS({ 5 * NSEC, 64, 1, 2 }, /* level 0 -> 1 */
			{ 6 * NSEC - 1, 64, 1, 1 }, /* 0.000000001 < 1 -> 1.000000001 */
			{ 6 * NSEC, 64, 0, 1 }, /* 1 exactly */
			{ 6 * NSEC + 1, 64, 1, 1 }, /* 0.999999999 -> 1.999999999 */
			{ 7 * NSEC, 64, 0, 1 }, /* 1 exactly */
			{ 7 * NSEC + 1, 64, 1, 0 }, { 7 * NSEC + 1 + YEAR_NS, 64, 1, 1 }) },
		/* gcra 7/s burst 2, on the core's vt clock: answers 20 ns or more from a threshold. */
		{ "gcra 7/s burst 2",
		  { GCRA, "7", 7, 1, false, 2, -1, 0, 0 },
		  STEPS({ 0, 64, 2, 1 }, /* level 2 */
			{ 142857122, 64, 1, 1 }, /* 1.000000146 -> 2.000000146 */
			{ NSEC, 64, 2, 1 }) }, /* drained to 0 (never below) */
	};

	run_hand_cases(cases, ARRAY_SIZE(cases));
}

/* Fixed and sliding windows, in packets. */
TEST(algo_hand_windows)
{
	const struct hand_case cases[] = {
		/* 10 per 1 s: windows [k s, (k+1) s). */
		{ "fixed-window 10 per 1s",
		  { FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		  STEPS({ NSEC - 1, 64, 10, 2 }, /* the window's last ns */
			{ NSEC, 64, 10, 1 }, /* a new window */
			{ 2 * NSEC - 1, 64, 0, 3 },
			{ 3 * NSEC, 64, 4, 0 }, /* window 2 was skipped */
			{ 4 * NSEC - 1, 64, 6, 1 }, { 4 * NSEC + NSEC / 2, 64, 10, 1 }) },
		/* 1000/s, window 1 ms: L = 1. */
		{ "fixed-window 1 per 1ms",
		  { FW, "1000", 1000, 1, false, 0, -1, MS, 0 },
		  STEPS({ 0, 64, 1, 1 }, { MS - 1, 64, 0, 1 }, { MS, 64, 1, 1 },
			{ 5 * MS + 7, 64, 1, 1 }) },
		/* 12.5/s over 2 s windows: L = 25. */
		{ "fixed-window 25 per 2s",
		  { FW, "12.5", 25, 2, false, 0, -1, 2 * NSEC, 0 },
		  STEPS({ NSEC, 64, 25, 1 }, { 2 * NSEC - 1, 64, 0, 1 }, { 2 * NSEC, 64, 25, 1 }) },
		/* 10 per 1 s: pass iff prev x (W - e) / W + cur < 10. */
		{ "sliding-window 10 per 1s",
		  { SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		  STEPS({ NSEC / 2, 64, 10, 1 }, /* window 0: 10 */
			{ NSEC, 64, 0, 1 }, /* 10 x 1 + 0 = 10 */
			{ NSEC + 100 * MS, 64, 1, 1 }, /* 9 + 0 < 10; 9 + 1 = 10 */
			{ NSEC + 500 * MS, 64, 4, 1 }, /* 5 + 1..4 < 10 */
			{ 2 * NSEC - 1, 64, 5, 1 }, /* 0.00000001 + 5..9 */
			{ 2 * NSEC, 64, 0, 1 }, /* window 1 passed 10 */
			{ 2 * NSEC + 500 * MS - 1, 64, 5, 1 }, /* 5.00000001 + 0..4 */
			{ 3 * NSEC, 64, 5, 1 }, /* window 2 passed 5 */
			{ 5 * NSEC, 64, 10, 1 }) }, /* two windows on: nothing carried */
		/* The tie prev x (W - e) / W + cur = L exactly: prev 4, e = W / 2. */
		{ "sliding-window tie",
		  { SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
		  STEPS({ 0, 64, 4, 0 },
			{ NSEC + NSEC / 2, 64, 8, 1 }, /* 2 + 0..7 < 10, 2 + 8 = 10 */
			{ 2 * NSEC + NSEC / 4, 64, 4, 1 }, /* 8 x 3/4 = 6: 6 + 0..3; 6 + 4 = 10 */
			{ 2 * NSEC + NSEC / 4 + 1, 64, 1, 1 }) }, /* 5.999999992 + 4 */
		/* 1 per s over 3 s windows (L = 3): prev 3 weighs exactly 2 at e = 1 s. */
		{ "sliding-window 3 per 1s",
		  { SW, "1", 1, 1, false, 0, -1, 3 * NSEC, 0 },
		  STEPS({ 0, 64, 3, 1 }, { 4 * NSEC - 1, 64, 1, 1 }, /* 2.000000001 + 0; + 1 */
			{ 4 * NSEC, 64, 0, 1 }, /* 2 + 1 = 3 */
			{ 4 * NSEC + 1, 64, 1, 1 }) }, /* 1.999999999 + 1; + 2 */
	};

	run_hand_cases(cases, ARRAY_SIZE(cases));
}

TEST(algo_hand_bytes)
{
	const struct hand_case cases[] = {
		/* 12kbit = 1500 bytes/s, burst 3000: two full frames, then one per second. */
		{ "token-bucket 12kbit burst 3000",
		  { TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
		  STEPS({ 0, 1500, 2, 1 }, { NSEC - 1000, 1500, 0, 1 }, /* 1499.9985 bytes */
			{ NSEC + 2000, 1500, 1, 1 }, /* 1500.003 */
			{ 10 * NSEC, 3000, 1, 1 }, /* a frame of exactly the burst */
			{ 20 * NSEC, 3001, 0, 1 }, /* one byte over: never */
			{ 20 * NSEC, 1, 3000, 1 }) }, /* the bucket holds exactly 3000 */
		/* 100mbit: a byte every 80 ns, so the core keeps exact ns. */
		{ "token-bucket 100mbit burst 1500",
		  { TB, "100mbit", 12500000, 1, true, 1500, -1, 0, 0 },
		  STEPS({ 0, 1500, 1, 1 }, { 119999, 1500, 0, 1 }, /* 1499.9875 */
			{ 120000, 1500, 1, 1 }, /* 1500 */
			{ 120000 + 5119, 64, 0, 1 }, /* 63.9875 */
			{ 120000 + 5120, 64, 1, 1 }) }, /* 64 */
		/* gcra: the level may pass the burst by one frame. 1gbit: 8 ns a byte. */
		{ "gcra 1gbit burst 3000",
		  { GCRA, "1gbit", 125000000, 1, true, 3000, -1, 0, 0 },
		  STEPS({ 0, 1500, 2, 1 }, /* 0, 1500 -> 3000 */
			{ 1, 65535, 1, 1 }, /* 2999.875 < 3000 */
			{ 1 + 65535 * 8, 64, 1, 1 }, /* 68534.875 - 65535 */
			{ 1 + 65535 * 8 + 7, 64, 0, 1 }, /* 3063 */
			{ 1 + 65535 * 8 + 512, 64, 1, 0 }) }, /* 2999.875 */
		/* windows count bytes: the packet that crosses L passes whole. */
		{ "fixed-window 12kbit",
		  { FW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
		  STEPS({ 0, 1000, 2, 1 }, /* 0, 1000 < 1500; 2000 */
			{ NSEC, 1499, 2, 1 }, /* 0, 1499 < 1500 */
			{ 2 * NSEC, 1500, 1, 1 }) }, /* 1500 is not < 1500 */
		{ "sliding-window 12kbit",
		  { SW, "12kbit", 1500, 1, true, 0, -1, NSEC, 0 },
		  STEPS({ 0, 1000, 2, 1 }, /* window 0: 2000 bytes */
			{ NSEC + NSEC / 4, 100, 0, 1 }, /* 2000 x 3/4 = 1500 */
			{ NSEC + NSEC / 2, 100, 5, 1 }) }, /* 1000 + 0..400; 1000 + 500 */
		/* 1gbit = 125000000 bytes/s: a 1500-byte frame every 12 us. */
		{ "token-bucket 1gbit",
		  { TB, "1gbit", 125000000, 1, true, 1500, -1, 0, 0 },
		  STEPS({ 0, 1500, 1, 1 }, { 11999, 1500, 0, 1 }, { 12000, 1500, 1, 1 },
			{ 24000, 1500, 1, 0 }) },
		/* 400gbit = 50 bytes/ns: the largest frame refills in 1310.7 ns. */
		{ "token-bucket 400gbit",
		  { TB, "400gbit", 50000000000ULL, 1, true, 65535, -1, 0, 0 },
		  STEPS({ 0, 65535, 1, 1 }, { 1310, 65535, 0, 1 }, { 1311, 65535, 1, 1 }) },
		/*
		 * The brief's byte-mode case: 1500-byte frames against 12kbit
		 * (1500 bytes/s) with burst 3000. Sent once a second after the
		 * burst, each finds exactly 1500 bytes of tokens and passes: a
		 * source at its rate is never dropped. (Was algo_hand_bytes_at_rate.)
		 */
		{ "token-bucket 12kbit burst 3000, a frame a second",
		  { TB, "12kbit", 1500, 1, true, 3000, -1, 0, 0 },
		  STEPS({ 0, 1500, 2, 1 }, { NSEC, 1500, 1, 1 }, { 2 * NSEC, 1500, 1, 1 },
			{ 3 * NSEC, 1500, 1, 1 }, { 60 * NSEC, 1500, 2, 1 },
			{ 61 * NSEC, 1500, 1, 1 }) },
	};

	run_hand_cases(cases, ARRAY_SIZE(cases));
}

TEST(algo_hand_initial)
{
	const struct hand_case cases[] = {
		{ "token-bucket --initial 5",
		  { TB, "10", 10, 1, false, 20, 5, 0, 0 },
		  STEPS({ 0, 64, 5, 1 }, { 100 * MS, 64, 1, 1 }) },
		{ "token-bucket --initial 0",
		  { TB, "10", 10, 1, false, 20, 0, 0, 0 },
		  STEPS({ 3, 64, 0, 2 }, { 100 * MS + 2, 64, 0, 1 }, { 100 * MS + 3, 64, 1, 1 },
			{ 10 * NSEC, 64, 20, 1 }) },
		{ "token-bucket --initial 20 (= burst)",
		  { TB, "10", 10, 1, false, 20, 20, 0, 0 },
		  STEPS({ 0, 64, 20, 1 }) },
		{ "gcra --initial 20 (= burst)",
		  { GCRA, "10", 10, 1, false, 20, 20, 0, 0 },
		  STEPS({ 0, 64, 0, 1 }, { 1, 64, 1, 1 }, { 100 * MS, 64, 0, 1 },
			{ 100 * MS + 1, 64, 1, 1 }) },
		{ "gcra --initial 19",
		  { GCRA, "10", 10, 1, false, 20, 19, 0, 0 },
		  STEPS({ 0, 64, 1, 1 }) },
		{ "gcra bytes --initial 1500",
		  { GCRA, "12kbit", 1500, 1, true, 3000, 1500, 0, 0 },
		  STEPS({ 0, 1500, 1, 1 }, { NSEC, 1500, 1, 1 }) },
	};

	run_hand_cases(cases, ARRAY_SIZE(cases));
}

/* Without --burst: one second at the rate, at least one packet or 1522 bytes. */
TEST(algo_hand_default_burst)
{
	const struct hand_case cases[] = {
		{ "10/s", { TB, "10", 10, 1, false, 0, -1, 0, 0 }, STEPS({ 0, 64, 10, 1 }) },
		{ "12.5/s", { TB, "12.5", 25, 2, false, 0, -1, 0, 0 }, STEPS({ 0, 64, 13, 1 }) },
		{ "0.5/s",
		  { TB, "0.5", 1, 2, false, 0, -1, 0, 0 },
		  STEPS({ 0, 64, 1, 1 }, { 2 * NSEC - 1, 64, 0, 1 }, { 2 * NSEC, 64, 1, 1 }) },
		{ "1kbit",
		  { TB, "1kbit", 125, 1, true, 0, -1, 0, 0 },
		  STEPS({ 0, 1522, 1, 1 }, { 0, 1, 0, 1 }) },
		{ "gcra 10kbyte",
		  { GCRA, "10kbyte", 10000, 1, true, 0, -1, 0, 0 },
		  STEPS({ 0, 5000, 2, 1 }) },
	};

	run_hand_cases(cases, ARRAY_SIZE(cases));
}

/* ---------------------------------------------------------------------------
 * Differential tests against the reference model.
 */

/*
 * Policies for the differential tests: the rates of the brief (1, 3, 7, 10,
 * 100, 1000, 12.5, 10kbit, 100mbit, 1gbit, 400gbit, ...) and awkward ones.
 * cfg_exact() sorts them into the two tests.
 */
static const struct cfg diff_cfgs[] = {
	{ TB, "10", 10, 1, false, 20, -1, 0, 0 },
	{ TB, "1", 1, 1, false, 1, -1, 0, 0 },
	{ TB, "3", 3, 1, false, 5, -1, 0, 24 },
	{ TB, "7", 7, 1, false, 3, 0, 0, 0 },
	{ TB, "12.5", 25, 2, false, 0, -1, 0, 24 },
	{ TB, "0.5", 1, 2, false, 2, -1, 0, 0 },
	{ TB, "100", 100, 1, false, 150, -1, 0, 0 },
	{ TB, "1000", 1000, 1, false, 1, -1, 0, 0 },
	{ TB, "3.3", 33, 10, false, 4, 2, 0, 0 },
	{ TB, "73000000", 73000000, 1, false, 1000, -1, 0, 0 },
	{ TB, "100mpps", 100000000, 1, false, 64, -1, 0, 0 },
	{ TB, "128000000000", 128000000000ULL, 1, false, 1000, -1, 0, 0 },
	{ TB, "10kbit", 1250, 1, true, 3000, -1, 0, 0 },
	{ TB, "12kbit", 1500, 1, true, 3000, -1, 0, 24 },
	{ TB, "1.5mbit", 187500, 1, true, 1522, 700, 0, 0 },
	{ TB, "500kbyte", 500000, 1, true, 65535, -1, 0, 0 },
	{ TB, "100mbit", 12500000, 1, true, 100000, -1, 0, 0 },
	{ TB, "1gbit", 125000000, 1, true, 0, -1, 0, 0 },
	{ TB, "400gbit", 50000000000ULL, 1, true, 1000000, -1, 0, 0 },
	{ GCRA, "10", 10, 1, false, 20, -1, 0, 0 },
	{ GCRA, "1", 1, 1, false, 1, -1, 0, 24 },
	{ GCRA, "3", 3, 1, false, 5, 4, 0, 0 },
	{ GCRA, "7", 7, 1, false, 1, 1, 0, 0 },
	{ GCRA, "12.5", 25, 2, false, 0, -1, 0, 0 },
	{ GCRA, "1000", 1000, 1, false, 10, -1, 0, 0 },
	{ GCRA, "100mpps", 100000000, 1, false, 1, -1, 0, 0 },
	{ GCRA, "10kbit", 1250, 1, true, 3000, -1, 0, 0 },
	{ GCRA, "12kbit", 1500, 1, true, 1, -1, 0, 24 },
	{ GCRA, "1gbit", 125000000, 1, true, 1500, 700, 0, 0 },
	{ GCRA, "400gbit", 50000000000ULL, 1, true, 65536, -1, 0, 0 },
	{ FW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ FW, "10", 10, 1, false, 0, -1, 100 * MS, 24 },
	{ FW, "3", 3, 1, false, 0, -1, 0, 0 },
	{ FW, "12.5", 25, 2, false, 0, -1, 2 * NSEC, 0 },
	{ FW, "7", 7, 1, false, 0, -1, 3 * NSEC, 0 },
	{ FW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ FW, "100mpps", 100000000, 1, false, 0, -1, 1000, 0 },
	{ FW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
	{ FW, "10kbit", 1250, 1, true, 0, -1, NSEC, 0 },
	{ FW, "12kbit", 1500, 1, true, 0, -1, 100 * MS, 24 },
	{ FW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },
	{ SW, "10", 10, 1, false, 0, -1, NSEC, 0 },
	{ SW, "10", 10, 1, false, 0, -1, 100 * MS, 24 },
	{ SW, "3", 3, 1, false, 0, -1, 0, 0 },
	{ SW, "12.5", 25, 2, false, 0, -1, 2 * NSEC, 0 },
	{ SW, "7", 7, 1, false, 0, -1, 3 * NSEC, 0 },
	{ SW, "1000", 1000, 1, false, 0, -1, MS, 0 },
	{ SW, "100mpps", 100000000, 1, false, 0, -1, 1000, 0 },
	{ SW, "1", 1, 1, false, 0, -1, 86400 * NSEC, 0 },
	{ SW, "10kbit", 1250, 1, true, 0, -1, NSEC, 0 },
	{ SW, "12kbit", 1500, 1, true, 0, -1, 100 * MS, 24 },
	{ SW, "400gbit", 50000000000ULL, 1, true, 0, -1, 1000, 0 },

	{ TB, "129", 129, 1, false, 3, -1, 0, 0 },
	{ TB, "12345678", 12345678, 1, false, 100, -1, 0, 0 },
	{ TB, "999.999", 999999, 1000, false, 10, -1, 0, 0 },
	{ TB, "1.000000001", 1000000001, 1000000000, false, 2, -1, 0, 0 },
	{ TB, "137byte", 137, 1, true, 137, -1, 0, 0 },
	{ TB, "1001bit", 1001, 8, true, 2002, -1, 0, 0 },
	{ TB, "1009byte", 1009, 1, true, 1009, -1, 0, 0 },
	{ TB, "399999999999bit", 399999999999ULL, 8, true, 100000, -1, 0, 0 },
	{ GCRA, "129", 129, 1, false, 3, -1, 0, 0 },
	{ GCRA, "12345678", 12345678, 1, false, 100, -1, 0, 0 },
	{ GCRA, "137byte", 137, 1, true, 137, -1, 0, 0 },
	{ GCRA, "1001bit", 1001, 8, true, 2002, -1, 0, 0 },
	{ GCRA, "399999999999bit", 399999999999ULL, 8, true, 100000, -1, 0, 0 },
};

/* Exactly the spec, packet for packet: windows, and rates of whole ns per cost unit. */
TEST(algo_diff_whole_ns_rates)
{
	diff_configs(diff_cfgs, ARRAY_SIZE(diff_cfgs), true, 16, 1);
}

/* The others: the algorithm on the core's vt clock, and the spec but for ties. */
TEST(algo_diff_tick_rates)
{
	diff_configs(diff_cfgs, ARRAY_SIZE(diff_cfgs), false, 16, 2);
}
