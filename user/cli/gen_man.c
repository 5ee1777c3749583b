// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gen-man: xdp-ratelimit(8) from its one source, docs/xdp-ratelimit.8.in.
 * The prose is written by hand; each line "@OPTIONS NAME@" becomes the
 * options of NAME (global, policy, rules or a command) from the option table, so
 * the man page lists exactly the options the program takes; "@COUNTERS@"
 * becomes the counters of the counter table (user/lib/counters.h) and
 * "@MAPS@" the pinned maps of RL_MAPS() (user/lib/maplist.h), each with what
 * it holds. Fails if a placeholder names nothing, or if an option, a
 * command, the counters or the maps are left out, or a subcommand (rule add)
 * is not named in bold anywhere ("\fBrule add\fR").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "counters.h"
#include "maplist.h"

/* The groups a placeholder stands for: a command's own, without policy and global. */
static int groups_of(const char *name, unsigned int *groups)
{
	const struct rl_cmd *cmd;

	if (!strcmp(name, "global")) {
		*groups = RL_G_GLOBAL;
		return 0;
	}
	if (!strcmp(name, "policy")) {
		*groups = RL_G_POLICY;
		return 0;
	}
	if (!strcmp(name, "rules")) {
		*groups = RL_G_RULE;
		return 0;
	}
	cmd = rl_cmd_find(rl_cmds, name);
	if (!cmd)
		return -ENOENT;
	*groups = cmd->groups & ~(RL_G_POLICY | RL_G_GLOBAL | RL_G_RULE);
	return 0;
}

/* .TP entries: a bold name, then what it is, as a sentence. */
static void entry(const char *name, const char *text)
{
	fputs(".TP\n.B ", stdout);
	rl_man_text(stdout, name);
	fputc('\n', stdout);
	rl_man_text(stdout, text);
	fputs(text[strlen(text) - 1] == '.' ? "\n" : ".\n", stdout);
}

static void print_counters(void)
{
	for (size_t i = 0; i < rl_counter_count; i++)
		entry(rl_counter_table[i].name, rl_counter_table[i].help);
}

/* What a map holds starts in lower case in the table; a sentence here. */
static void print_maps(void)
{
	char text[512];

	for (size_t i = 0; i < RL_N_MAPS; i++) {
		snprintf(text, sizeof(text), "%s", rl_map_whats[i]);
		if (text[0] >= 'a' && text[0] <= 'z')
			text[0] = (char)(text[0] - 'a' + 'A');
		entry(rl_map_names[i], text);
	}
}

int main(int argc, char **argv)
{
	int counters_seen = 0, maps_seen = 0;
	unsigned int covered = 0, groups;
	bool cmd_seen[32] = {}, sub_seen[32][8] = {};
	const struct rl_cmd *cmd;
	char line[4096], name[64], bold[96];
	unsigned long lineno = 0;
	FILE *in;
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-man SOURCE.8.in > PAGE.8\n");
		return 2;
	}
	for (const struct rl_cmd *c = rl_cmds; c->name; c++) {
		size_t nsubs = 0;

		for (const struct rl_cmd *s = c->subs; s && s->name; s++)
			nsubs++;
		if (c - rl_cmds >= 32 || nsubs > 8) {
			fprintf(stderr,
				"gen-man: more commands than cmd_seen[] or sub_seen[] hold\n");
			return 1;
		}
	}
	in = fopen(argv[1], "r");
	if (!in) {
		fprintf(stderr, "gen-man: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		lineno++;
		for (const struct rl_cmd *c = rl_cmds; c->name; c++) {
			for (const struct rl_cmd *s = c->subs; s && s->name; s++) {
				snprintf(bold, sizeof(bold), "\\fB%s %s\\fR", c->name, s->name);
				if (strstr(line, bold))
					sub_seen[c - rl_cmds][s - c->subs] = true;
			}
		}
		if (!strcmp(line, "@COUNTERS@\n")) {
			print_counters();
			counters_seen++;
			continue;
		}
		if (!strcmp(line, "@MAPS@\n")) {
			print_maps();
			maps_seen++;
			continue;
		}
		if (sscanf(line, "@OPTIONS %63[a-z]@", name) != 1) {
			fputs(line, stdout);
			continue;
		}
		if (groups_of(name, &groups)) {
			fprintf(stderr, "gen-man: %s:%lu: no options named '%s'\n", argv[1], lineno,
				name);
			ret = 1;
			continue;
		}
		cmd = rl_cmd_find(rl_cmds, name);
		if (cmd)
			cmd_seen[cmd - rl_cmds] = true;
		covered |= groups;
		if (groups)
			rl_opts_man(stdout, groups);
		else
			fputs(".PP\nNo options of its own.\n", stdout);
	}
	fclose(in);
	for (const struct rl_cmd *c = rl_cmds; c->name; c++) {
		if (!cmd_seen[c - rl_cmds] && !(c->groups & RL_CMD_HIDDEN)) {
			fprintf(stderr, "gen-man: %s has no @OPTIONS %s@ line\n", argv[1], c->name);
			ret = 1;
		}
		for (const struct rl_cmd *s = c->subs; s && s->name; s++) {
			if (!sub_seen[c - rl_cmds][s - c->subs]) {
				fprintf(stderr, "gen-man: %s never names \"%s %s\" in bold\n",
					argv[1], c->name, s->name);
				ret = 1;
			}
		}
	}
	if (counters_seen != 1 || maps_seen != 1) {
		fprintf(stderr,
			"gen-man: %s: expected one @COUNTERS@ and one @MAPS@ line, found %d and %d\n",
			argv[1], counters_seen, maps_seen);
		ret = 1;
	}
	for (size_t i = 0; i < rl_opt_count; i++) {
		if (!(rl_opt_table[i].group & covered)) {
			fprintf(stderr, "gen-man: --%s is in no @OPTIONS@ section\n",
				rl_opt_table[i].name);
			ret = 1;
		}
	}
	return ret;
}
