// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The option table (user/lib/opts.c): one parser for every command, the
 * configuration words tests and benchmarks use, and the documentation that
 * comes from the same table (--help, the man page).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "opts.h"
#include "rules.h"
#include "sync_agent.h"
#include "test.h"
#include "xdp_attach.h"

static int parse(struct rl_args *a, unsigned int groups, int max_pos, const char *const *words,
		 char *err, size_t errlen)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = "cmd";
	while (*words)
		argv[argc++] = (char *)*words++;
	argv[argc] = NULL;
	rl_args_defaults(a);
	return rl_args_parse(a, groups, max_pos, argc, argv, err, errlen);
}

#define ATTACH (RL_G_GLOBAL | RL_G_JSON | RL_G_POLICY | RL_G_LIMITER | RL_G_ATTACH)

TEST(opts_any_order_both_spellings)
{
	static const char *const forms[][8] = {
		{ "eth0", "--rate", "100", "--burst=5", "-v", NULL },
		{ "--rate=100", "eth0", "-v", "--burst", "5", NULL },
		{ "-v", "--burst", "5", "--rate", "100", "eth0", NULL },
	};
	char err[RL_ERRLEN];
	struct rl_args a;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (!ASSERT_OK(parse(&a, ATTACH, 1, forms[i], err, sizeof(err)), err))
			continue;
		ASSERT_EQ(a.npos, 1, "one word");
		ASSERT_STREQ(a.pos[0], "eth0", "the interface, wherever it stands");
		ASSERT_EQ(a.pol.rate_num, 100, "rate");
		ASSERT_TRUE(a.pol.rate_set && a.pol.burst_set, "given flags");
		ASSERT_EQ(a.pol.burst, 5, "burst");
		ASSERT_EQ(a.verbose, 1, "-v");
		ASSERT_EQ(rl_args_given(&a, RL_G_POLICY), 2, "two policy options given");
	}
}

TEST(opts_refused)
{
	static const struct {
		const char *words[6];
		const char *why;
	} cases[] = {
		{ { "--rate", "100", "--rate", "200", NULL }, "--rate is given twice" },
		{ { "--rate=1", "--rate", "1", NULL }, "--rate is given twice" },
		{ { "-j", "--json", "--rate", "1", NULL }, "--json is given twice" },
		{ { "--rate", NULL }, "--rate needs a value" },
		{ { "--frob", NULL }, "unknown option '--frob'" },
		{ { "-z", NULL }, "unknown option '-z'" },
		{ { "a", "b", NULL }, "unexpected argument 'b'" },
		{ { "--watch", "1", NULL }, "unknown option '--watch'" },
		{ { "--mode", "fast", NULL }, "--mode: 'fast' is neither native nor skb" },
		{ { "--algo", "leaky", NULL }, "unknown algorithm 'leaky'" },
		{ { "--window", "2d", NULL }, "--window" },
		{ { "--window", "48h", NULL }, "out of range" },
		{ { "--prefix4", "33", NULL }, "--prefix4: 33 is out of range" },
	};
	char err[RL_ERRLEN];
	struct rl_args a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		ASSERT_TRUE(parse(&a, ATTACH, 1, cases[i].words, err, sizeof(err)) < 0,
			    cases[i].why);
		ASSERT_CONTAINS(err, cases[i].why, cases[i].words[0]);
	}
}

/* --watch takes fractions of a second, in [0.1, 3600], and says so when refused. */
TEST(opts_watch_fractional)
{
	static const struct {
		const char *val;
		double want; /* 0: refused with @why */
		const char *why;
	} cases[] = {
		{ "0.5", 0.5, NULL },
		{ "0.1", 0.1, NULL },
		{ "2", 2, NULL },
		{ "3600", 3600, NULL },
		{ "1.25", 1.25, NULL },
		{ "0.05", 0, "--watch: 0.05 is out of range: from 0.1 to 3600 seconds" },
		{ "0", 0, "--watch: 0 is out of range" },
		{ "-1", 0, "--watch: -1 is out of range" },
		{ "3600.5", 0, "--watch: 3600.5 is out of range" },
		{ "1e9", 0, "--watch: 1e9 is out of range" },
		{ "1s", 0, "--watch: '1s' is not a number of seconds" },
		{ "nan", 0, "--watch: 'nan' is not a number of seconds" },
		{ "inf", 0, "--watch: 'inf' is not a number of seconds" },
		{ " 1", 0, "--watch: ' 1' is not a number of seconds" },
		{ "", 0, "--watch: '' is not a number of seconds" },
		{ "0x1", 0, "--watch: '0x1' is not a number of seconds" },
	};
	char err[RL_ERRLEN];
	struct rl_args a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *w[] = { "eth0", "--watch", cases[i].val, NULL };
		int ret = parse(&a, RL_G_WATCH, 1, w, err, sizeof(err));

		if (cases[i].want) {
			if (ASSERT_OK(ret, cases[i].val))
				ASSERT_TRUE(a.watch_s == cases[i].want, cases[i].val);
			continue;
		}
		ASSERT_TRUE(ret < 0, cases[i].val);
		ASSERT_CONTAINS(err, cases[i].why, cases[i].val);
	}
	/* -w is the same option; not given, it is 0 (no watch). */
	{
		const char *w[] = { "eth0", "-w", "0.25", NULL }, *none[] = { "eth0", NULL };

		if (ASSERT_OK(parse(&a, RL_G_WATCH, 1, w, err, sizeof(err)), err))
			ASSERT_TRUE(a.watch_s == 0.25, "-w 0.25");
		if (ASSERT_OK(parse(&a, RL_G_WATCH, 1, none, err, sizeof(err)), err))
			ASSERT_TRUE(a.watch_s == 0, "no --watch");
	}
}

/* One interval of a watch sleeps that long, a fraction of a second too. */
TEST(opts_watch_sleep)
{
	struct timespec t0, t1;
	double dt;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_OK(rl_watch_sleep(0.15), "sleep 0.15 s");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT_TRUE(dt >= 0.15 && dt < 0.9, "slept 0.15 s, not 0 nor a whole second");
}

/* A mistyped option gets the nearest of its command's, if one is that near. */
TEST(opts_did_you_mean)
{
	static const struct {
		const char *words[4];
		const char *msg; /* the whole message */
	} cases[] = {
		{ { "--brust", "5", NULL }, "unknown option '--brust' (did you mean '--burst'?)" },
		{ { "--brust=5", NULL }, "unknown option '--brust=5' (did you mean '--burst'?)" },
		{ { "--rtae", "5", NULL }, "unknown option '--rtae' (did you mean '--rate'?)" },
		{ { "--max-source", "5", NULL },
		  "unknown option '--max-source' (did you mean '--max-sources'?)" },
		{ { "--jsno", NULL }, "unknown option '--jsno' (did you mean '--json'?)" },
		/* Too far from any: no guess. */
		{ { "--frob", NULL }, "unknown option '--frob'" },
		{ { "--watch", "1", NULL }, "unknown option '--watch'" },
	};
	char err[RL_ERRLEN];
	struct rl_args a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		ASSERT_TRUE(parse(&a, ATTACH, 1, cases[i].words, err, sizeof(err)) < 0,
			    cases[i].words[0]);
		ASSERT_STREQ(err, cases[i].msg, cases[i].words[0]);
	}
	/* The words besides options count, and only the options of the groups given. */
	ASSERT_STREQ(rl_opt_suggest("rulse", RL_G_POLICY, (const char *const[]){ "rules", NULL }),
		     "rules", "an extra word");
	ASSERT_TRUE(rl_opt_suggest("brust", RL_G_WATCH, NULL) == NULL, "burst is not stats'");
	ASSERT_TRUE(rl_opt_suggest("burst", RL_G_POLICY, NULL) == NULL, "an exact name: none");
	ASSERT_TRUE(rl_opt_suggest("xy", RL_G_POLICY, NULL) == NULL, "a short word far away");
}

TEST(opts_verbose_repeats)
{
	static const char *const w[] = { "-v", "x", "-vv", "--verbose", NULL };
	char err[RL_ERRLEN];
	struct rl_args a;

	if (ASSERT_OK(parse(&a, ATTACH, 1, w, err, sizeof(err)), err))
		ASSERT_EQ(a.verbose, 4, "-v counts");
}

/* A list option (--src) may repeat and adds up; its neighbours may not. */
TEST(opts_list_repeats)
{
	static const char *const w[] = { "r",	  "--src",   "10.0.0.0/8,10.1.0.0/16",
					 "--src", "::1/128", "--allow",
					 NULL };
	static const char *const twice[] = { "r", "--allow", "--allow", NULL };
	char err[RL_ERRLEN], *argv[8] = { "cmd" };
	struct rl_rule r;
	struct rl_args a;

	/* Without a rule to write into, --src is refused, not dropped. */
	ASSERT_TRUE(parse(&a, RL_G_RULE, 1, w, err, sizeof(err)) < 0, "no rule");
	ASSERT_CONTAINS(err, "--src: is an option of a rule", "says why");

	for (int i = 0; w[i]; i++)
		argv[i + 1] = (char *)w[i];
	rl_rule_init(&r);
	rl_args_defaults(&a);
	a.rule = &r;
	if (ASSERT_OK(rl_args_parse(&a, RL_G_RULE, 1, 7, argv, err, sizeof(err)), err)) {
		ASSERT_EQ(r.n4, 2, "a comma list");
		ASSERT_EQ(r.n6, 1, "and a second --src");
		ASSERT_TRUE(a.allow, "--allow");
	}
	rl_rule_free(&r);
	ASSERT_TRUE(parse(&a, RL_G_RULE, 1, twice, err, sizeof(err)) < 0, "a flag twice");
	ASSERT_CONTAINS(err, "--allow is given twice", "still refused");
}

TEST(opts_stop_at_command)
{
	static const char *const w[] = { "-v", "attach", "--rate", "1", NULL };
	char err[RL_ERRLEN];
	struct rl_args a;

	/* The global options before the command; the command's own are not read. */
	ASSERT_EQ(parse(&a, RL_G_GLOBAL, -1, w, err, sizeof(err)), 2, "index of the command");
	ASSERT_EQ(a.verbose, 1, "-v");
}

TEST(opts_policy_words)
{
	static const char *const w[] = { "--algo=gcra", "--rate",	  "1mbit",
					 "--burst",	"3000",		  "--action",
					 "dry-run",	"--clock=coarse", NULL };
	static const char *const bad[] = { "--rate", "1", "eth0", NULL };
	struct rl_policy pol;
	struct rl_opts o;
	char err[RL_ERRLEN];

	if (!ASSERT_OK(rl_policy_parse(&pol, &o, w, err, sizeof(err)), err))
		return;
	ASSERT_EQ(pol.algo, RL_ALGO_GCRA, "algo");
	ASSERT_TRUE(pol.bytes, "a byte rate");
	ASSERT_EQ(pol.rate_num * 1, 125000 * pol.rate_den, "1 mbit/s is 125000 bytes/s");
	ASSERT_EQ(pol.burst, 3000, "burst");
	ASSERT_EQ(o.action, RL_ACTION_DRY_RUN, "action");
	ASSERT_EQ(o.clock, RL_CLOCK_COARSE, "clock");
	ASSERT_TRUE(o.action_set && o.clock_set && !o.fail_set, "given flags");
	ASSERT_TRUE(rl_policy_parse(&pol, &o, bad, err, sizeof(err)) < 0, "no words in a policy");
}

TEST(opts_file_key_is_the_flag)
{
	char err[RL_ERRLEN];
	struct rl_args a;
	const struct rl_opt *o;

	rl_args_defaults(&a);
	o = rl_opt_find("max-sources", RL_G_ATTACH);
	if (!ASSERT_TRUE(o != NULL, "max-sources is an attach option"))
		return;
	ASSERT_OK(rl_opt_set(&a, o, "4096", err, sizeof(err)), "set from text");
	ASSERT_EQ(a.max_sources, 4096, "stored where the table says");
	ASSERT_TRUE(rl_opt_set(&a, o, "0", err, sizeof(err)) < 0, "range checked");
	ASSERT_CONTAINS(err, "--max-sources: 0 is out of range", "named as the flag");
	ASSERT_TRUE(rl_opt_find("max-sources", RL_G_POLICY) == NULL, "not a policy option");
}

/* Every option of the table is in some command's --help and in the man page. */
TEST(opts_documented)
{
	static const char *const cmds[] = { "",	       "attach",   "set",     "detach",
					    "status",  "stats",	   "top",     "simulate",
					    "cleanup", "exporter", "events",  "apply",
					    "rule",    "blocked",  "unblock", "sync" };
	char *help = NULL, *man = NULL, cmd[512], needle[96];
	size_t len = 0;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *out = NULL;

		snprintf(cmd, sizeof(cmd), "%s/xdp-ratelimit %s --help", rl_build_dir, cmds[i]);
		if (!ASSERT_EQ(rl_run(cmd, &out, NULL), 0, cmd)) {
			free(out);
			continue;
		}
		help = realloc(help, len + strlen(out) + 1);
		strcpy(help + len, out);
		len += strlen(out);
		free(out);
	}
	snprintf(cmd, sizeof(cmd), "cat %s/xdp-ratelimit.8", rl_build_dir);
	ASSERT_EQ(rl_run(cmd, &man, NULL), 0, "the man page is built");
	for (size_t i = 0; i < rl_opt_count; i++) {
		const struct rl_opt *o = &rl_opt_table[i];
		char *m;

		snprintf(needle, sizeof(needle), "--%s", o->name);
		ASSERT_CONTAINS(help, needle, "--help lists it");
		/* The man page writes each '-' as "\-". */
		m = needle;
		snprintf(needle, sizeof(needle), "\\fB\\-\\-");
		strncat(needle, o->name, sizeof(needle) - strlen(needle) - 1);
		for (char *p = needle + 8; (p = strchr(p, '-')); p += 2) {
			memmove(p + 1, p, strlen(p) + 1);
			*p = '\\';
		}
		ASSERT_CONTAINS(man, m, "the man page lists it");
	}
	free(help);
	free(man);
}

/*
 * The table stores a choice as its index and sits below the units whose
 * enums those indexes are (it includes neither): the orders must agree.
 */
_Static_assert(RL_MODE_NATIVE == 0 && RL_MODE_SKB == 1, "--mode: index = enum rl_mode");
_Static_assert(RL_SYNC_FB_LOCAL == 0 && RL_SYNC_FB_SHARE == 1,
	       "--fallback: index = enum rl_sync_fallback");

TEST(opts_choices_are_the_enums)
{
	static const char *const w[] = { "--mode", "skb", NULL };
	static const char *const s[] = { "--fallback", "share", "--interval", "1m", NULL };
	char err[RL_ERRLEN];
	struct rl_args a;

	rl_args_defaults(&a);
	ASSERT_EQ(a.mode, RL_MODE_NATIVE, "default mode");
	ASSERT_EQ(a.sync_fallback, RL_SYNC_FB_LOCAL, "default fallback");
	ASSERT_EQ(a.sync_interval_ns, RL_SYNC_INTERVAL_DEFAULT_NS, "default interval");
	if (ASSERT_OK(parse(&a, RL_G_ATTACH, 0, w, err, sizeof(err)), err))
		ASSERT_EQ(a.mode, RL_MODE_SKB, "--mode skb");
	if (ASSERT_OK(parse(&a, RL_G_SYNC, 0, s, err, sizeof(err)), err)) {
		ASSERT_EQ(a.sync_fallback, RL_SYNC_FB_SHARE, "--fallback share");
		ASSERT_EQ(a.sync_interval_ns, RL_SYNC_INTERVAL_MAX_NS, "--interval 1m, the most");
	}
}

/*
 * rl_opt_give() is what the command line does with --NAME VALUE: the same
 * fields (the rule's too), the same options recorded as given, and the
 * same message about the value, which the command line prefixes "--NAME: ".
 */
TEST(opts_give_is_the_flag)
{
	static const struct {
		unsigned int groups;
		const char *name, *val; /* val NULL: a flag */
	} cases[] = {
		{ RL_G_POLICY, "rate", "10" },
		{ RL_G_POLICY, "rate", "1mbit" },
		{ RL_G_POLICY, "rate", "ten" },
		{ RL_G_POLICY, "rate", "0" },
		{ RL_G_POLICY, "burst", "5" },
		{ RL_G_POLICY, "burst", "0" },
		{ RL_G_POLICY, "algo", "gcra" },
		{ RL_G_POLICY, "algo", "leaky" },
		{ RL_G_POLICY, "window", "1500ms" },
		{ RL_G_POLICY, "window", "2d" },
		{ RL_G_POLICY, "window", "48h" },
		{ RL_G_POLICY, "prefix6", "129" },
		{ RL_G_LIMITER, "action", "dry-run" },
		{ RL_G_LIMITER, "action", "x" },
		{ RL_G_LIMITER, "clock", "coarse" },
		{ RL_G_ATTACH, "mode", "skb" },
		{ RL_G_ATTACH, "mode", "hw" },
		{ RL_G_ATTACH, "max-sources", "4096" },
		{ RL_G_ATTACH, "max-sources", "0" },
		{ RL_G_ATTACH, "share", "eth1" },
		{ RL_G_SYNC, "interval", "0" },
		{ RL_G_SYNC, "interval", "10ms" },
		{ RL_G_SYNC, "fallback", "nope" },
		{ RL_G_RULE, "src", "10.0.0.0/8,2001:db8::/32" },
		{ RL_G_RULE, "src", "" },
		{ RL_G_RULE, "src", "10.0.0.1/8" },
		{ RL_G_RULE, "src", "10.0.0.0/8," },
		{ RL_G_RULE, "src-file", "/nonexistent" },
		{ RL_G_RULE, "proto", "udp" },
		{ RL_G_RULE, "proto", "256" },
		{ RL_G_RULE, "dport", "1024-65535" },
		{ RL_G_RULE, "dport", "90-80" },
		{ RL_G_RULE, "dport", "99999" },
		{ RL_G_RULE, "tcp-flags", "SA/SA" },
		{ RL_G_RULE, "tcp-flags", "SA/S" },
		{ RL_G_RULE, "tcp-flags", "x" },
		{ RL_G_RULE, "block", "1m" },
		{ RL_G_RULE, "block", "9000h" },
		{ RL_G_RULE, "allow", NULL },
		{ RL_G_RULE, "before", "web" },
	};
	char cli_err[RL_ERRLEN], err[RL_ERRLEN], want[RL_ERRLEN + 32], what[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char word[64];
		const struct rl_opt *o = rl_opt_find(cases[i].name, cases[i].groups);
		struct rl_rule r1, r2;
		struct rl_args a, b;
		int ret1, ret2;

		snprintf(what, sizeof(what), "--%s %s", cases[i].name,
			 cases[i].val ? cases[i].val : "");
		if (!ASSERT_TRUE(o != NULL, what))
			continue;
		snprintf(word, sizeof(word), "--%s", cases[i].name);
		cli_err[0] = err[0] = '\0';
		rl_rule_init(&r1);
		rl_rule_init(&r2);
		/* The command line's way, with a rule to write into. */
		{
			char *argv[4] = { "cmd", word, (char *)cases[i].val, NULL };

			rl_args_defaults(&a);
			a.rule = &r1;
			ret1 = rl_args_parse(&a, cases[i].groups, 0, cases[i].val ? 3 : 2, argv,
					     cli_err, sizeof(cli_err));
		}
		rl_args_defaults(&b);
		b.rule = &r2;
		ret2 = rl_opt_give(&b, o, cases[i].val, err, sizeof(err));
		ASSERT_EQ(ret2, ret1, what);
		if (ret1) {
			snprintf(want, sizeof(want), "--%s: %s", cases[i].name, err);
			ASSERT_STREQ(cli_err, want, what);
		} else {
			/* Every field, the given options among them; the rule apart. */
			a.rule = b.rule = NULL;
			ASSERT_TRUE(!memcmp(&a, &b, sizeof(a)), what);
			ASSERT_TRUE(r1.src_given == r2.src_given && r1.n4 == r2.n4 &&
					    r1.n6 == r2.n6 &&
					    !memcmp(&r1.l4, &r2.l4, sizeof(r1.l4)),
				    what);
			ASSERT_TRUE(!r1.n4 || !memcmp(r1.src4, r2.src4, r1.n4 * sizeof(*r1.src4)),
				    what);
			ASSERT_TRUE(!r1.n6 || !memcmp(r1.src6, r2.src6, r1.n6 * sizeof(*r1.src6)),
				    what);
		}
		rl_rule_free(&r1);
		rl_rule_free(&r2);
	}
}
