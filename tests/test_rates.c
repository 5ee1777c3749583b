// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Policies as a user writes them (user/lib/policy.c, user/lib/config.c): rates per
 * minute and hour, how a rate is printed back, what is refused (a byte burst
 * or window limit below one full-size frame), the TCP burst warning, and
 * set with the policy already in force.
 *
 *	rates_per_period	30/m, 5/h, 30r/m, 1gpps ... as exact fractions
 *	rates_period_refused	a period after a unit that is already per second
 *	rates_str_round_trip	rl_rate_str() reads back to the same rate
 *	rates_full_frame	byte bursts and window limits under 1522 bytes
 *	rates_full_frame_cli	the same refusal from simulate and attach
 *	rates_tcp_warning	byte bursts under rate x 200 ms
 *	rates_config_same	rl_config_same() ignores generation and carry
 *	rates_set_unchanged	set with the live policy: no new generation
 */
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "test.h"
#include "config.h"
#include "harness.h"
#include "netns.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct rate_case {
	const char *s;
	__u64 num, den; /* reduced */
	bool bytes;
	const char *str; /* rl_rate_str() */
};

static const struct rate_case rate_cases[] = {
	{ "30/m", 1, 2, false, "0.5/s" },
	{ "30r/m", 1, 2, false, "0.5/s" },
	{ "100/min", 5, 3, false, "100/min" },
	{ "20/minute", 1, 3, false, "20/min" },
	{ "5/h", 1, 720, false, "5/hour" },
	{ "5/hr", 1, 720, false, "5/hour" },
	{ "7/hour", 7, 3600, false, "7/hour" },
	{ "1/d", 1, 86400, false, "1/day" },
	{ "1000/day", 5, 432, false, "1000/day" },
	{ "2.5/m", 1, 24, false, "2.5/min" },
	{ "10/s", 10, 1, false, "10/s" },
	{ "10/sec", 10, 1, false, "10/s" },
	{ "10r/s", 10, 1, false, "10/s" },
	{ "10/second", 10, 1, false, "10/s" },
	{ "10pps", 10, 1, false, "10/s" },
	{ "1gpps", 1000000000, 1, false, "1000000000/s" },
	{ "2.5kpps/s", 2500, 1, false, "2500/s" },
	{ "100mbit/s", 12500000, 1, true, "100mbit" },
	{ "100MBIT", 12500000, 1, true, "100mbit" },
	{ "12.5mbyte", 12500000, 1, true, "100mbit" },
	{ "1.544mbit", 193000, 1, true, "1.544mbit" },
	{ "400gbit", 50000000000ULL, 1, true, "400gbit" },
	{ "1tbit", 125000000000ULL, 1, true, "1tbit" },
	{ "1001bit", 1001, 8, true, "1.001kbit" },
	{ "137byte", 137, 1, true, "1.096kbit" },
	{ "0.000000001bit", 1, 8000000000ULL, true, "0.000000001bit" },
	{ "0.000000001kbyte", 1, 1000000, true, "0.000001byte" },
	{ "0.000000001/d", 1, 86400000000000ULL, false, "0.000000001/day" },
};

TEST(rates_per_period)
{
	char err[RL_ERRLEN];
	__u64 num, den;
	bool bytes;

	for (size_t i = 0; i < ARRAY_SIZE(rate_cases); i++) {
		const struct rate_case *c = &rate_cases[i];

		err[0] = '\0';
		if (!ASSERT_OK(rl_parse_rate(c->s, &num, &den, &bytes, err, sizeof(err)), c->s))
			continue;
		ASSERT_EQ(num, c->num, c->s);
		ASSERT_EQ(den, c->den, c->s);
		ASSERT_EQ(bytes, c->bytes, c->s);
	}
}

TEST(rates_period_refused)
{
	static const struct {
		const char *s, *msg;
	} cases[] = {
		{ "10kpps/m", "kpps is already per second" },
		{ "10pps/h", "pps is already per second" },
		{ "1gpps/d", "gpps is already per second" },
		{ "100mbit/m", "byte rates are per second" },
		{ "5kbyte/h", "byte rates are per second" },
		{ "30/fortnight", "unknown period '/fortnight'" },
		{ "30/", "unknown period '/'" },
		{ "30/m/m", "unknown period '/m/m'" },
		{ "0/m", "is zero" },
		{ "10 xyz", "unknown rate unit ' xyz'" },
		{ "10 pps", "unknown rate unit ' pps'" },
		{ "10r", "" }, /* nginx's r without a period: per second, accepted */
	};
	char err[RL_ERRLEN];
	__u64 num, den;
	bool bytes;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret;

		err[0] = '\0';
		ret = rl_parse_rate(cases[i].s, &num, &den, &bytes, err, sizeof(err));
		if (!cases[i].msg[0]) {
			ASSERT_OK(ret, cases[i].s);
			continue;
		}
		ASSERT_EQ(ret, -EINVAL, cases[i].s);
		ASSERT_CONTAINS(err, cases[i].msg, cases[i].s);
	}
}

TEST(rates_str_round_trip)
{
	char err[RL_ERRLEN], buf[64];
	struct rl_policy pol, back;

	for (size_t i = 0; i < ARRAY_SIZE(rate_cases); i++) {
		const struct rate_case *c = &rate_cases[i];

		rl_policy_defaults(&pol);
		if (!ASSERT_OK(rl_parse_rate(c->s, &pol.rate_num, &pol.rate_den, &pol.bytes, err,
					     sizeof(err)),
			       c->s))
			continue;
		ASSERT_STREQ(rl_rate_str(&pol, buf, sizeof(buf)), c->str, c->s);
		rl_policy_defaults(&back);
		if (!ASSERT_OK(rl_parse_rate(buf, &back.rate_num, &back.rate_den, &back.bytes, err,
					     sizeof(err)),
			       buf))
			continue;
		ASSERT_EQ(back.rate_num, pol.rate_num, buf);
		ASSERT_EQ(back.rate_den, pol.rate_den, buf);
		ASSERT_EQ(back.bytes, pol.bytes, buf);
	}
}

/* rl_config_build() on command-line style options: 0 or -EINVAL, message in @err. */
static int build(const char *const *opts, struct rl_config *cfg, char *err, size_t errlen)
{
	struct rl_policy pol;
	struct rl_opts o;

	if (rl_policy_parse(&pol, &o, opts, err, errlen))
		return -EINVAL;
	return rl_config_build(cfg, &pol, &o, NULL, err, errlen);
}

TEST(rates_full_frame)
{
	static const struct {
		const char *opts[10];
		const char *msg; /* NULL: accepted */
	} cases[] = {
		{ { "--rate", "100mbit", "--burst", "1000", NULL },
		  "--burst 1000 bytes cannot pass a full-size frame: give at least 1522" },
		{ { "--rate", "100mbit", "--burst", "1521", NULL },
		  "--burst 1521 bytes cannot pass a full-size frame: give at least 1522" },
		{ { "--rate", "100mbit", "--burst", "1522", NULL }, NULL },
		{ { "--rate", "1kbyte", NULL }, NULL }, /* default burst: at least 1522 */
		{ { "--rate", "1000", "--burst", "1", NULL }, NULL }, /* packets */
		/* gcra passes while the level is under the burst, whatever the cost. */
		{ { "--algo", "gcra", "--rate", "100mbit", "--burst", "1000", NULL }, NULL },
		{ { "--algo", "fixed-window", "--rate", "12kbit", NULL },
		  "--rate x --window is 1500 bytes, less than one full-size frame (1522 bytes)" },
		{ { "--algo", "sliding-window", "--rate", "100mbit", "--window", "100us", NULL },
		  "--rate x --window is 1250 bytes" },
		{ { "--algo", "sliding-window", "--rate", "1522byte", NULL }, NULL },
		{ { "--algo", "fixed-window", "--rate", "10", "--window", "100ms", NULL }, NULL },
	};
	struct rl_config cfg;
	char err[RL_ERRLEN];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char what[128];
		int ret;

		snprintf(what, sizeof(what), "case %zu (%s %s)", i, cases[i].opts[0],
			 cases[i].opts[1]);
		err[0] = '\0';
		ret = build(cases[i].opts, &cfg, err, sizeof(err));
		if (!cases[i].msg) {
			ASSERT_OK(ret, err[0] ? err : what);
			continue;
		}
		ASSERT_EQ(ret, -EINVAL, what);
		ASSERT_CONTAINS(err, cases[i].msg, what);
	}
}

/* simulate and attach refuse it too, before touching anything. */
TEST(rates_full_frame_cli)
{
	char *cmd = NULL, *out = NULL, *err = NULL;
	int status;

	if (asprintf(
		    &cmd,
		    "echo 1.0 198.18.0.1 1500 | %s/xdp-ratelimit simulate --rate 100mbit --burst 1000",
		    rl_build_dir) < 0)
		return;
	status = rl_run(cmd, &out, &err);
	ASSERT_EQ(status, 2, "simulate exit status");
	ASSERT_CONTAINS(err, "--burst 1000 bytes cannot pass a full-size frame: give at least 1522",
			"simulate");
	ASSERT_STREQ(out, "", "simulate prints no verdict");
	free(cmd);
	free(out);
	free(err);
	out = err = NULL;
	/* attach checks the policy before it looks for the interface. */
	if (asprintf(&cmd,
		     "%s/xdp-ratelimit attach rl-no-such-if --algo fixed-window --rate 12kbit",
		     rl_build_dir) < 0)
		return;
	status = rl_run(cmd, &out, &err);
	ASSERT_EQ(status, 2, "attach exit status");
	ASSERT_CONTAINS(err, "less than one full-size frame", "attach");
	free(cmd);
	free(out);
	free(err);
}

TEST(rates_tcp_warning)
{
	static const struct {
		const char *opts[10];
		const char *msg; /* NULL: no warning */
	} cases[] = {
		{ { "--rate", "100mbit", "--burst", "150000", NULL },
		  "--burst 150000 bytes is under 200 ms at 100 Mbit/s (2500000 bytes): TCP flows will "
		  "get well under the rate; see README 'Sizing a burst for TCP'" },
		{ { "--algo", "gcra", "--rate", "100mbit", "--burst", "2499999", NULL },
		  "--burst 2499999 bytes is under 200 ms at 100 Mbit/s (2500000 bytes)" },
		{ { "--rate", "100mbit", "--burst", "2500000", NULL }, NULL },
		{ { "--rate", "100mbit", NULL }, NULL }, /* default: one second */
		{ { "--rate", "1gbit", "--burst", "1522", NULL },
		  "under 200 ms at 1 Gbit/s (25000000 bytes)" },
		{ { "--rate", "1001bit", "--burst", "1522", NULL }, NULL },
		/* 200 ms of 12346 bytes/s is 2469.2: rounded up. */
		{ { "--algo", "gcra", "--rate", "12346byte", "--burst", "2469", NULL },
		  "at 98.768kbit (2470 bytes)" },
		{ { "--algo", "gcra", "--rate", "12346byte", "--burst", "2470", NULL }, NULL },
		{ { "--rate", "100000", "--burst", "10", NULL }, NULL }, /* packets */
		{ { "--algo", "fixed-window", "--rate", "100mbit", "--window", "1ms", NULL },
		  NULL },
	};
	char msg[RL_ERRLEN], err[RL_ERRLEN];
	struct rl_policy pol;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char what[64];
		bool warn;

		snprintf(what, sizeof(what), "case %zu", i);
		if (!ASSERT_OK(rl_policy_parse(&pol, NULL, cases[i].opts, err, sizeof(err)), what))
			return;
		msg[0] = '\0';
		warn = rl_policy_tcp_warning(&pol, msg, sizeof(msg));
		ASSERT_EQ(warn, cases[i].msg != NULL, what);
		if (cases[i].msg)
			ASSERT_CONTAINS(msg, cases[i].msg, what);
	}
}

TEST(rates_config_same)
{
	static const char *const base[] = { "--rate", "1000", "--burst", "50", NULL };
	static const char *const other[][8] = {
		{ "--rate", "1000", "--burst", "51", NULL },
		{ "--rate", "1001", "--burst", "50", NULL },
		{ "--rate", "1000", "--burst", "50", "--action", "dry-run", NULL },
		{ "--rate", "1000", "--burst", "50", "--prefix6", "48", NULL },
		{ "--rate", "1000", "--burst", "50", "--initial", "50", NULL },
		{ "--algo", "gcra", "--rate", "1000", "--burst", "50", NULL },
		{ "--rate", "1000", "--burst", "50", "--malformed", "pass", NULL },
	};
	struct rl_config a, b, c;

	if (!rl_build_config(&a, base, NULL) || !rl_build_config(&b, base, &a))
		return;
	/* b is a's successor: another generation, carrying from a, the same policy. */
	ASSERT_EQ(b.gen, a.gen + 1, "next generation");
	ASSERT_TRUE(rl_config_same(&a, &b), "same policy, next generation");
	ASSERT_TRUE(rl_config_same(&b, &a), "symmetric");
	for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
		char what[64];

		snprintf(what, sizeof(what), "differs: case %zu", i);
		if (!rl_build_config(&c, other[i], &a))
			continue;
		ASSERT_TRUE(!rl_config_same(&a, &c), what);
	}
}

/* The generation in "status --json". */
static bool status_gen(struct rl_ns *ns, unsigned long long *gen)
{
	char *out = NULL, *p;
	bool ok = false;

	if (rl_ns_cli(ns, &out, NULL, "status %s --json", ns->rx_if) == 0 && out &&
	    (p = strstr(out, "\"generation\":")))
		ok = sscanf(p, "\"generation\":%llu", gen) == 1;
	free(out);
	return ok;
}

TEST_FLAGS(rates_set_unchanged, RL_TEST_ROOT)
{
	struct rl_ns ns = {};
	char *out = NULL, *err = NULL;
	unsigned long long gen = 0;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		goto out;
	if (!ASSERT_OK(rl_ns_cli(&ns, NULL, NULL, "attach %s --mode skb --rate 1000 --burst 50",
				 ns.rx_if),
		       "attach"))
		goto out;
	ASSERT_TRUE(status_gen(&ns, &gen) && gen == 1, "generation 1 after attach");
	ASSERT_OK(rl_ns_cli(&ns, &out, &err, "set %s --rate 1000", ns.rx_if), "set, same rate");
	ASSERT_CONTAINS(out, "unchanged", "set, same rate");
	ASSERT_CONTAINS(out, "1000/s, burst 50", "prints the policy");
	ASSERT_TRUE(status_gen(&ns, &gen) && gen == 1, "still generation 1");
	free(out);
	out = NULL;
	ASSERT_OK(rl_ns_cli(&ns, &out, NULL, "set %s --burst 50 --prefix4 32 --json", ns.rx_if),
		  "set --json, same policy");
	ASSERT_CONTAINS(out, "\"unchanged\":true", "json says unchanged");
	ASSERT_TRUE(status_gen(&ns, &gen) && gen == 1, "still generation 1 after --json");
	free(out);
	out = NULL;
	ASSERT_OK(rl_ns_cli(&ns, &out, NULL, "set %s --burst 60", ns.rx_if), "set, new burst");
	ASSERT_TRUE(out && !strstr(out, "unchanged"), "a change is not unchanged");
	ASSERT_TRUE(status_gen(&ns, &gen) && gen == 2, "generation 2 after a change");
out:
	free(out);
	free(err);
	rl_ns_destroy(&ns);
}
