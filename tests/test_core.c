// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The algorithm core on hand-computed cases. */
#include "opts.h"
#include "test.h"
#include "trace.h"

static bool make_sim(struct rl_sim *s, const char *const *opts)
{
	char err[RL_ERRLEN];
	struct rl_policy pol;

	if (rl_policy_parse(&pol, NULL, opts, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "options: %s", err);
		return false;
	}
	if (rl_sim_init(s, &pol, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "policy: %s", err);
		return false;
	}
	return true;
}

/* After 5 s idle, 30 packets spread evenly over 20 ms: how many pass. */
static unsigned int burst_after_idle(const char *const *opts)
{
	struct rl_key key = { { 0, 0, 0, 1 } };
	struct rl_sim s;
	unsigned int passed = 0;

	if (!make_sim(&s, opts))
		return 0;
	for (int i = 0; i < 30; i++)
		passed += rl_sim_packet(&s, &key, 5000000000ULL + i * 20000000ULL / 29, 64, NULL);
	rl_sim_free(&s);
	return passed;
}

TEST(core_burst_after_idle)
{
	ASSERT_EQ(burst_after_idle((const char *const[]){ "--algo", "token-bucket", "--rate", "10",
							  "--burst", "20", NULL }),
		  20, "token-bucket");
	ASSERT_EQ(burst_after_idle((const char *const[]){ "--algo", "gcra", "--rate", "10",
							  "--burst", "20", NULL }),
		  21, "gcra");
	ASSERT_EQ(burst_after_idle((const char *const[]){ "--algo", "fixed-window", "--rate", "10",
							  "--window", "1s", NULL }),
		  10, "fixed-window");
	ASSERT_EQ(burst_after_idle((const char *const[]){ "--algo", "sliding-window", "--rate",
							  "10", "--window", "1s", NULL }),
		  10, "sliding-window");
}
