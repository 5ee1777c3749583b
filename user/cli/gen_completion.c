// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gen-completion: the bash completion of xdp-ratelimit from its template,
 * dist/xdp-ratelimit.bash.in. The completion logic is written by hand; the
 * line "@DATA@" becomes the commands, the subcommands of those that have
 * them (rule add), each command's options and words, the options that take
 * a value and their choices, from the command and option tables, so the
 * completion offers exactly what the parser accepts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

/*
 * The words a command takes besides options, from its synopsis: the first
 * max_pos words, brackets dropped, up to the first option. Placeholders
 * (IFACE, FILE) say what to complete; a lower-case word is a literal.
 */
static void print_words(const struct rl_cmd *cmd)
{
	const char *s = cmd->synopsis;

	for (int i = 0; s && i < cmd->max_pos; i++) {
		size_t n;

		s += strspn(s, " [");
		n = strcspn(s, " ]");
		if (!n || *s == '-')
			break;
		printf("%s%.*s", i ? " " : "", (int)n, s);
		s += n;
		s += strspn(s, "]");
	}
}

/*
 * Calls @fn for every command the completion knows, with its key: "rule"
 * for a command, "rule add" for a subcommand; hidden ones (help) left out.
 */
static void each_cmd(void (*fn)(const char *key, const struct rl_cmd *cmd))
{
	char key[64];

	for (const struct rl_cmd *c = rl_cmds; c->name; c++) {
		if (c->groups & RL_CMD_HIDDEN)
			continue;
		fn(c->name, c);
		for (const struct rl_cmd *s = c->subs; s && s->name; s++) {
			snprintf(key, sizeof(key), "%s %s", c->name, s->name);
			fn(key, s);
		}
	}
}

/* What rl_cmd_run() parses: the command's groups and the global ones. */
static void print_opts(const char *key, const struct rl_cmd *cmd)
{
	unsigned int groups = cmd->groups | RL_G_GLOBAL;

	printf("\t['%s']='", key);
	for (size_t j = 0, n = 0; j < rl_opt_count; j++)
		if (rl_opt_table[j].group & groups)
			printf("%s--%s", n++ ? " " : "", rl_opt_table[j].name);
	printf("'\n");
}

static void print_cmd_words(const char *key, const struct rl_cmd *cmd)
{
	printf("\t['%s']='", key);
	print_words(cmd);
	printf("'\n");
}

static void print_subs(const char *key, const struct rl_cmd *cmd)
{
	if (!cmd->subs)
		return;
	printf("\t['%s']='", key);
	for (const struct rl_cmd *s = cmd->subs; s->name; s++)
		printf("%s%s", s == cmd->subs ? "" : " ", s->name);
	printf("'\n");
}

/*
 * Options that take a value, long and short, per command ("CMD --opt"):
 * their value is not a word to count. Per command, because two commands
 * may give one letter to different options (-w: stats --watch SECONDS,
 * events --pcap FILE).
 */
static void print_arg(const char *key, const struct rl_cmd *cmd)
{
	unsigned int groups = cmd->groups | RL_G_GLOBAL;

	for (size_t j = 0; j < rl_opt_count; j++) {
		const struct rl_opt *o = &rl_opt_table[j];

		if (o->type == RL_OPT_FLAG || !(o->group & groups))
			continue;
		printf("\t['%s --%s']='%s'\n", key, o->name, o->arg);
		if (o->short_name)
			printf("\t['%s -%c']='%s'\n", key, o->short_name, o->arg);
	}
}

static void print_data(void)
{
	printf("declare -g _xdp_ratelimit_cmds='");
	for (const struct rl_cmd *c = rl_cmds, *first = c; c->name; c++)
		if (!(c->groups & RL_CMD_HIDDEN))
			printf("%s%s", c == first ? "" : " ", c->name);
	printf("'\n");

	/* Before the command: the global options. */
	printf("declare -g _xdp_ratelimit_global='");
	for (size_t j = 0, n = 0; j < rl_opt_count; j++)
		if (rl_opt_table[j].group & RL_G_GLOBAL)
			printf("%s--%s", n++ ? " " : "", rl_opt_table[j].name);
	printf("'\n");

	/* A command of subcommands: the word after it is one of these (rule add). */
	printf("declare -gA _xdp_ratelimit_subcmds=(\n");
	each_cmd(print_subs);
	printf(")\n");

	printf("declare -gA _xdp_ratelimit_opts=(\n");
	each_cmd(print_opts);
	printf(")\n");

	printf("declare -gA _xdp_ratelimit_words=(\n");
	each_cmd(print_cmd_words);
	printf(")\n");

	printf("declare -gA _xdp_ratelimit_arg=(\n");
	each_cmd(print_arg);
	printf(")\n");

	printf("declare -gA _xdp_ratelimit_choices=(\n");
	for (size_t j = 0; j < rl_opt_count; j++) {
		const struct rl_opt *o = &rl_opt_table[j];

		if (o->type == RL_OPT_FLAG || !o->choices)
			continue;
		printf("\t[--%s]='", o->name);
		for (size_t k = 0; o->choices[k]; k++)
			printf("%s%s", k ? " " : "", o->choices[k]);
		printf("'\n");
		if (o->short_name) {
			printf("\t[-%c]=\"${_xdp_ratelimit_choices[--%s]}\"\n", o->short_name,
			       o->name);
		}
	}
	printf(")\n");
}

int main(int argc, char **argv)
{
	char line[4096];
	int seen = 0;
	FILE *in;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-completion TEMPLATE.bash.in > COMPLETION\n");
		return 2;
	}
	in = fopen(argv[1], "r");
	if (!in) {
		fprintf(stderr, "gen-completion: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), in)) {
		if (strcmp(line, "@DATA@\n")) {
			fputs(line, stdout);
			continue;
		}
		print_data();
		seen++;
	}
	fclose(in);
	if (seen != 1) {
		fprintf(stderr, "gen-completion: %s: expected one @DATA@ line, found %d\n", argv[1],
			seen);
		return 1;
	}
	return 0;
}
