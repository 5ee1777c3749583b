// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The documentation against the code's own tables: the man page as built
 * (BUILD/xdp-ratelimit.8) lists every counter of the counter table and every
 * map of RL_MAPS(), and names no map that is not one; README.md,
 * docs/design.md and the man page name every shipped systemd unit
 * (dist/ *.service.in); each option's help names every choice the parser
 * takes. Run from the source tree (tests/run.sh is).
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include "counters.h"
#include "maplist.h"
#include "netns.h"
#include "opts.h"
#include "rl_common.h"
#include "rl_sa.h"
#include "test.h"

static char *slurp(const char *path)
{
	char *out = NULL;

	if (rl_sh(&out, "cat '%s'", path)) {
		free(out);
		return NULL;
	}
	return out;
}

/* The text of section @name (".SH NAME") of the man page, up to the next .SH; malloc'd. */
static char *section(const char *man, const char *name)
{
	char head[64];
	const char *s, *e;

	snprintf(head, sizeof(head), "\n.SH %s\n", name);
	s = strstr(man, head);
	if (!s)
		return NULL;
	e = strstr(s + strlen(head), "\n.SH ");
	return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

static char *man_page(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/xdp-ratelimit.8", rl_build_dir);
	return slurp(path);
}

/* "\-" in troff for each '-' of @s: how the page spells a name. */
static void troff(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '-')
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n] = '\0';
}

TEST(docs_man_lists_every_counter)
{
	char *man = man_page(), *sec = NULL, want[96];

	if (!ASSERT_TRUE(man != NULL, "the built man page"))
		return;
	sec = section(man, "COUNTERS");
	if (!ASSERT_TRUE(sec != NULL, "a COUNTERS section"))
		goto out;
	for (size_t i = 0; i < rl_counter_count; i++) {
		snprintf(want, sizeof(want), "\n.TP\n.B %s\n", rl_counter_table[i].name);
		ASSERT_CONTAINS(sec, want, rl_counter_table[i].name);
	}
	/* The ones #26 found missing, by name, so an empty table cannot pass. */
	ASSERT_CONTAINS(sec, "\n.B nd\n", "nd");
	ASSERT_CONTAINS(sec, "\n.B sync_lost\n", "sync_lost");
out:
	free(sec);
	free(man);
}

/* The counter table is struct rl_counters, field for field. */
TEST(docs_counter_table_is_the_struct)
{
	bool seen[sizeof(struct rl_counters) / sizeof(__u64)] = {};

	ASSERT_EQ(rl_counter_count, sizeof(seen) / sizeof(seen[0]), "a row per counter");
	for (size_t i = 0; i < rl_counter_count; i++) {
		const struct rl_counter_info *c = &rl_counter_table[i];
		size_t k = c->off / sizeof(__u64);

		ASSERT_TRUE(c->off % sizeof(__u64) == 0 && k < sizeof(seen) / sizeof(seen[0]) &&
				    !seen[k],
			    c->name);
		if (k < sizeof(seen) / sizeof(seen[0]))
			seen[k] = true;
		ASSERT_TRUE(c->help && *c->help, c->name);
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(c->name, rl_counter_table[j].name) != 0, c->name);
	}
	ASSERT_EQ(rl_counter_table[0].off, offsetof(struct rl_counters, rx_packets), "rx_packets");
}

TEST(docs_man_lists_every_map)
{
	char *man = man_page(), *sec = NULL, want[96];
	const char *p;

	if (!ASSERT_TRUE(man != NULL, "the built man page"))
		return;
	sec = section(man, "FILES");
	if (!ASSERT_TRUE(sec != NULL, "a FILES section"))
		goto out;
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		snprintf(want, sizeof(want), "\n.TP\n.B %s\n", rl_map_names[i]);
		ASSERT_CONTAINS(sec, want, rl_map_names[i]);
		ASSERT_TRUE(rl_map_whats[i] && *rl_map_whats[i], rl_map_names[i]);
	}
	/* Every map the page names in bold anywhere is one (no map renamed or gone). */
	for (p = man; (p = strstr(p, "rl_")); p++) {
		size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		bool bold = (p >= man + 3 && !strncmp(p - 3, "\\fB", 3)) ||
			    (p >= man + 3 && !strncmp(p - 3, ".B ", 3)) ||
			    (p >= man + 4 && !strncmp(p - 4, ".BR ", 4));
		bool known = false;

		if (!bold)
			continue;
		for (size_t i = 0; i < RL_N_MAPS; i++)
			known |= strlen(rl_map_names[i]) == n && !strncmp(p, rl_map_names[i], n);
		snprintf(want, sizeof(want), "the man page's %.*s is a map of RL_MAPS()", (int)n,
			 p);
		ASSERT_TRUE(known, want);
	}
out:
	free(sec);
	free(man);
}

TEST(docs_name_every_unit)
{
	const char *docs[] = { "README.md", "docs/design.md" };
	char *text[3] = {}, unit[128], spelled[160];
	glob_t g;

	if (!ASSERT_OK(glob("dist/*.service.in", 0, NULL, &g), "dist/*.service.in (run from the "
							       "source tree)"))
		return;
	ASSERT_LE(4, g.gl_pathc, "shipped units");
	for (int d = 0; d < 2; d++)
		text[d] = slurp(docs[d]);
	text[2] = man_page();
	for (size_t i = 0; i < g.gl_pathc; i++) {
		snprintf(unit, sizeof(unit), "%.*s", (int)(strlen(g.gl_pathv[i]) - 5 - 3),
			 g.gl_pathv[i] + 5);
		for (int d = 0; d < 2; d++) {
			if (!ASSERT_TRUE(text[d] != NULL, docs[d]))
				continue;
			snprintf(spelled, sizeof(spelled), "%s names %s", docs[d], unit);
			ASSERT_TRUE(strstr(text[d], unit) != NULL, spelled);
		}
		troff(unit, spelled, sizeof(spelled));
		if (ASSERT_TRUE(text[2] != NULL, "the built man page"))
			ASSERT_CONTAINS(text[2], spelled, unit);
	}
	/* README says how many: the count in words must be the count of units. */
	if (text[0]) {
		static const char *const words[] = { "zero", "one", "two",   "three", "four",
						     "five", "six", "seven", "eight" };

		snprintf(spelled, sizeof(spelled), "%s systemd units",
			 g.gl_pathc < 9 ? words[g.gl_pathc] : "many");
		ASSERT_CONTAINS(text[0], spelled, "README's count of units");
	}
	for (int d = 0; d < 3; d++)
		free(text[d]);
	globfree(&g);
}

/* An option's help lists its choices by hand: every one the parser takes. */
TEST(docs_option_help_names_its_choices)
{
	char what[128];

	for (size_t i = 0; i < rl_opt_count; i++) {
		const struct rl_opt *o = &rl_opt_table[i];

		for (size_t k = 0; o->choices && o->choices[k]; k++) {
			snprintf(what, sizeof(what), "--%s's help names %s", o->name,
				 o->choices[k]);
			ASSERT_TRUE(strstr(o->help, o->choices[k]) != NULL, what);
		}
	}
}

/* --max-sources says what N is: room for N sources in 4N slots, not "tracked at once". */
TEST(docs_max_sources_is_the_tables)
{
	const struct rl_opt *o = rl_opt_find("max-sources", RL_G_ATTACH);

	if (!ASSERT_TRUE(o != NULL, "--max-sources"))
		return;
	ASSERT_TRUE(strstr(o->help, "IPv4 sources tracked at once") == NULL, "not the old wording");
	ASSERT_CONTAINS(o->help, "up to about 4N are tracked", "what the table holds");
}

/* stats counts the sources against what the IPv4 table holds: 4 slots per source asked. */
TEST_FLAGS(docs_stats_counts_sources_against_slots, RL_TEST_ROOT)
{
	char args[128], want[160], *out = NULL;
	struct rl_ns ns;

	if (!ASSERT_OK(rl_ns_create(&ns), "namespaces"))
		return;
	snprintf(args, sizeof(args), "attach %s --rate 100 --max-sources 1048576", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", args))
		goto out;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "stats %s", ns.rx_if), 0, "stats"))
		goto out;
	/* 2^19 sets of eight for the default million: 4,194,304 slots. */
	snprintf(want, sizeof(want),
		 "(IPv4 table: 4194304 slots, %d per source of --max-sources 1048576)\n",
		 RL_SA_SLOTS_PER_SOURCE);
	ASSERT_CONTAINS(out, want, "stats' sources line");
	free(out);
	out = NULL;
	if (ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "stats %s --json", ns.rx_if), 0, "stats --json"))
		ASSERT_CONTAINS(out, "\"table4_slots\":4194304", "stats --json");
out:
	free(out);
	rl_ns_destroy(&ns);
}
