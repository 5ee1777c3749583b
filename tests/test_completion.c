// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The bash completion as built (BUILD/xdp-ratelimit.bash): bash sources it,
 * COMP_WORDS and COMP_CWORD are set as bash sets them at a TAB (it splits
 * "--opt=value" at '='), and COMPREPLY is what it offers. It must offer what
 * the parser takes: the commands, the subcommands, each command's options,
 * every choice of an option that has a fixed set (from the option table,
 * which the parser reads too), and the rules of a live limiter where a rule's
 * name goes. test_install.c runs the installed copy for the rest.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netns.h"
#include "opts.h"
#include "rule.h"
#include "test.h"

/* COMPREPLY for @words (a bash array's contents, "" for an empty word), in @netns if set. */
static char *complete(const struct rl_ns *ns, const char *words)
{
	char *out = NULL;
	int ret;

	/* COMP_CWORD: the last word, as at a TAB at the end of the line. */
	ret = rl_sh(&out,
		    "%s%s bash -c 'source %s/xdp-ratelimit.bash; COMP_WORDS=(%s);"
		    " COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _xdp_ratelimit;"
		    " printf %%s \"${COMPREPLY[*]}\"'",
		    ns ? "nsenter --net=/run/netns/" : "", ns ? ns->rx : "", rl_build_dir, words);
	if (!ASSERT_EQ(ret, 0, words)) {
		free(out);
		return NULL;
	}
	return out;
}

static bool offers(const struct rl_ns *ns, const char *words, const char *want)
{
	char *out = complete(ns, words);
	bool ok = out && ASSERT_STREQ(out, want, words);

	free(out);
	return ok;
}

struct comp_case {
	const char *words;
	const char *reply; /* exactly; NULL: see contains, lacks */
	const char *contains, *lacks;
};

static const struct comp_case cases[] = {
	{ .words = "xdp-ratelimit \"\"", .contains = "attach set detach " },
	{ .words = "xdp-ratelimit \"\"", .contains = " rule " },
	{ .words = "xdp-ratelimit rule \"\"", .reply = "add del list" },
	{ .words = "xdp-ratelimit rule d", .reply = "del" },
	{ .words = "xdp-ratelimit rule add eth0 r1 --proto \"\"", .reply = "tcp udp icmp icmpv6" },
	{ .words = "xdp-ratelimit rule add eth0 r1 --proto = icmp", .reply = "icmp icmpv6" },
	{ .words = "xdp-ratelimit attach eth0 --algo \"\"",
	  .reply = "token-bucket gcra fixed-window sliding-window" },
	{ .words = "xdp-ratelimit attach eth0 --mode \"\"", .reply = "native skb" },
	/* After a command and its words: its options, only its own. */
	{ .words = "xdp-ratelimit rule add eth0 r1 --",
	  .contains = "--proto --dport --tcp-flags --allow",
	  .lacks = "--watch" },
	{ .words = "xdp-ratelimit rule add eth0 r1 --b", .reply = "--burst --block --before" },
	{ .words = "xdp-ratelimit rule del eth0 r1 -",
	  .reply = "--verbose --help --version --json" },
	{ .words = "xdp-ratelimit stats eth0 --",
	  .contains = "--watch --count",
	  .lacks = "--rate" },
	/* No limiter on it here (or no privileges): no rule names, and no error. */
	{ .words = "xdp-ratelimit rule del rl-nosuch \"\"", .reply = "" },
};

TEST(completion_words)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct comp_case *c = &cases[i];
		char *out = complete(NULL, c->words);

		if (!out)
			return;
		if (c->reply)
			ASSERT_STREQ(out, c->reply, c->words);
		if (c->contains)
			ASSERT_CONTAINS(out, c->contains, c->words);
		if (c->lacks)
			ASSERT_TRUE(!strstr(out, c->lacks), c->words);
		free(out);
	}
}

/* A command line that takes the options of @group, before its value. */
static const char *cmd_of(unsigned int group)
{
	if (group & (RL_G_POLICY | RL_G_ATTACH | RL_G_SYN))
		return "attach eth0";
	if (group & RL_G_LIMITER)
		return "set eth0";
	if (group & RL_G_RULE)
		return "rule add eth0 r1";
	if (group & RL_G_SYNC)
		return "sync eth0";
	return NULL;
}

/*
 * Every option with choices: completion offers exactly the table's choices,
 * and the parser takes each of them, so the two read one list.
 */
TEST(completion_choices_are_the_parsers)
{
	char words[256], want[512], err[RL_ERRLEN];
	int n = 0;

	for (size_t i = 0; i < rl_opt_count; i++) {
		const struct rl_opt *o = &rl_opt_table[i];
		const char *cmd = cmd_of(o->group);
		struct rl_rule rule;
		struct rl_args a;
		size_t off = 0;

		if (!o->choices)
			continue;
		n++;
		if (!ASSERT_TRUE(cmd != NULL, o->name))
			continue;
		want[0] = '\0';
		for (size_t k = 0; o->choices[k]; k++) {
			rl_args_defaults(&a);
			rl_rule_init(&rule);
			a.rule = &rule;
			ASSERT_OK(rl_opt_set(&a, o, o->choices[k], err, sizeof(err)),
				  o->choices[k]);
			rl_rule_free(&rule);
			off += (size_t)snprintf(want + off, sizeof(want) - off, "%s%s",
						k ? " " : "", o->choices[k]);
		}
		snprintf(words, sizeof(words), "xdp-ratelimit %s --%s \"\"", cmd, o->name);
		offers(NULL, words, want);
	}
	/* algo, action, on-insert-fail, malformed, clock, mode, fallback, proto at least. */
	ASSERT_LE(8, n, "options with choices");
}

/*
 * Where a rule's name goes (rule del IFACE RULE, --before RULE): the rules of
 * the limiter on that interface, from "rule list --json" run by the program
 * the line names; where an interface goes, those of this network namespace.
 */
TEST_FLAGS(completion_rule_names, RL_TEST_ROOT)
{
	char words[256], want[64], *prog = NULL;
	struct rl_ns ns;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	prog = realpath(rl_build_dir, NULL);
	if (!ASSERT_TRUE(prog != NULL, "the build directory"))
		goto out;
	snprintf(words, sizeof(words), "attach %s --rate 100", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", words))
		goto out;
	snprintf(words, sizeof(words), "rule add %s web --proto tcp --dport 443 --allow", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add web", words))
		goto out;
	snprintf(words, sizeof(words), "rule add %s dns --proto udp --dport 53 --rate 10",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add dns", words))
		goto out;

	snprintf(words, sizeof(words), "%s/xdp-ratelimit rule del %s \"\"", prog, ns.rx_if);
	offers(&ns, words, "web dns");
	snprintf(words, sizeof(words), "%s/xdp-ratelimit rule del %s d", prog, ns.rx_if);
	offers(&ns, words, "dns");
	snprintf(words, sizeof(words), "%s/xdp-ratelimit -v rule add %s r3 --allow --before \"\"",
		 prog, ns.rx_if);
	offers(&ns, words, "web dns");
	/* A new rule's name is not an existing one's. */
	snprintf(words, sizeof(words), "%s/xdp-ratelimit rule add %s \"\"", prog, ns.rx_if);
	offers(&ns, words, "");
	/* The interfaces of the namespace the shell is in (nsenter keeps the host's /sys). */
	snprintf(words, sizeof(words), "%s/xdp-ratelimit rule del \"\"", prog);
	snprintf(want, sizeof(want), "lo %s", ns.rx_if);
	offers(&ns, words, want);
out:
	free(prog);
	rl_ns_destroy(&ns);
}
