/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The CLI on top of the library: the command table, logging, what commands share. */
#ifndef RL_CLI_H
#define RL_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include "log.h"
#include "opts.h"

#define RL_VERSION "0.2.0"

/*
 * A command: its options are the groups it names (and the global ones). A
 * table of commands (bpftool's cmds[]) ends with a row whose name is NULL;
 * a command of subcommands (rule add, rule del, rule list) points to its
 * own table, and one dispatcher, rl_cmd_select(), serves every level.
 */
struct rl_cmd {
	const char *name;
	int (*fn)(const struct rl_args *a); /* NULL with subs */
	const struct rl_cmd *subs; /* its subcommands, or NULL */
	unsigned int groups; /* enum rl_opt_group, and the RL_CMD_ flags */
	int min_pos, max_pos; /* words besides options (the interface) */
	const char *synopsis; /* after "xdp-ratelimit NAME "; NULL with subs: theirs */
	const char *summary; /* one line, for the command list */
	const char *description; /* --help's prose; paragraphs end in "\n" */
};

/*
 * In rl_cmd.groups: the command parses its own words (a->argc, a->argv), as
 * help takes any words and never fails; nothing is parsed for it.
 */
#define RL_CMD_RAW (1U << 31)
/* In rl_cmd.groups: dispatched but not listed (help), in --help, the man page or completion. */
#define RL_CMD_HIDDEN (1U << 30)
/*
 * In rl_cmd.groups: the command only reads (status, stats, top, blocked, the
 * exporter), so it checks for the capabilities of reading the pins
 * (RL_CAPS_READ in env.h), not those of loading and attaching a program
 * (RL_CAPS_CHANGE): a unit that runs it grants only those.
 */
#define RL_CMD_READ (1U << 29)

/* The top-level commands; rule's subcommands (cmd_rule.c). */
extern const struct rl_cmd rl_cmds[];
extern const struct rl_cmd rl_rule_cmds[];

/* The row of @cmds named exactly @word, or NULL. */
const struct rl_cmd *rl_cmd_find(const struct rl_cmd *cmds, const char *word);
/*
 * Run the command argv[1] names among the subcommands of @parent (NULL: the
 * top-level commands), argv[0] being @parent's own word (or the program's):
 * its exit status, or 2 with a message when argv[1] names none.
 */
int rl_cmd_select(const struct rl_cmd *parent, int argc, char **argv);
/*
 * Parse a command's arguments (argv[0] is the command; @parent the command
 * it is a subcommand of, or NULL) and run it: its exit status. A command
 * with the rule options (RL_G_RULE: rule add) gets them in a->rule, a rule of
 * its own to take (rl_ruleset_add()); what it leaves is freed after it.
 */
int rl_cmd_run(const struct rl_cmd *parent, const struct rl_cmd *cmd, int argc, char **argv);
/*
 * rl_args_parse() over every word: after an error it goes on past the word at
 * fault, so that a->json and a->help say whether --json and --help are given
 * anywhere, before or after it. Returns the first error (its message in
 * @err), as rl_args_parse() alone would, or 0.
 */
int rl_cmd_parse(struct rl_args *a, unsigned int groups, int max_pos, int argc, char **argv,
		 char *err, size_t errlen);
/* --help of @cmd (of its parent for a subcommand: rule add's is rule's). */
void rl_cmd_usage(FILE *f, const struct rl_cmd *cmd);
void rl_usage(FILE *f);

int cmd_simulate(const struct rl_args *a);
/* simulate --pcap (cmd_simulate_pcap.c), and what it shares with the trace's simulate. */
int cmd_simulate_pcap(const struct rl_args *a);
struct rl_json;
struct rl_opts;
struct rl_params;
struct rl_policy;
struct rl_rsim;
struct rl_ruleset;
struct rl_srctab;
/*
 * The rules of a --rules file @path, one per line, after the default rule
 * made from @pol and @o (NULL: the defaults). 0, or nonzero with a message
 * printed that names the file and line.
 */
int simulate_load_rules(const char *path, const struct rl_policy *pol, const struct rl_opts *o,
			struct rl_ruleset *set);
/* Per-source counts of @tab (sources printed with the prefixes they are keyed by), and the totals. */
void simulate_sources(const struct rl_srctab *tab, unsigned int prefix4, unsigned int prefix6,
		      __u64 passed, __u64 dropped, struct rl_json *w);
/* Per-rule totals: a table, or the "rules" array of the JSON document @w is in. */
void simulate_rule_totals(const struct rl_rsim *rs, struct rl_json *w);
/*
 * "policy": {algo, rate, burst or window and limit, prefixes, and the levels
 * above the source of @lvl (RL_LVL_N of them; NULL: none)}, in the object @w is in.
 */
void simulate_policy_json(const struct rl_policy *pol, const struct rl_params *params,
			  const struct rl_level *lvl, struct rl_json *w);
/* Was simulate's option @name given? */
bool simulate_given(const struct rl_args *a, const char *name);
int cmd_attach(const struct rl_args *a);
int cmd_set(const struct rl_args *a);
int cmd_detach(const struct rl_args *a);
int cmd_status(const struct rl_args *a);
int cmd_stats(const struct rl_args *a);
int cmd_top(const struct rl_args *a);
int cmd_cleanup(const struct rl_args *a);
int cmd_exporter(const struct rl_args *a);
int cmd_events(const struct rl_args *a);
int cmd_apply(const struct rl_args *a);
int cmd_help(const struct rl_args *a);
int cmd_blocked(const struct rl_args *a);
int cmd_unblock(const struct rl_args *a);
int cmd_sync(const struct rl_args *a);
struct rl_pins;
struct rl_config;
struct rl_json;
struct rl_rstate_key;
struct rl_krule;
struct rl_block_state;
struct rl_rules_cfg;
/*
 * Every state of rl_rstate that a live rule of @cfg owns: @fn(key, its rule,
 * the state, the packet clock read just after it). Keys are collected
 * first, so that @fn may delete. With @max, only the first @max keys (in
 * the table's order) are read; *read (when not NULL) counts the entries
 * read, and is left at @max or more when some were not.
 */
typedef int (*rl_rule_state_fn)(const struct rl_rstate_key *k, const struct rl_krule *r,
				const struct rl_block_state *s, __u64 now, void *ctx);
int rl_rule_states_walk(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u32 clock,
			__u64 max, __u64 *read, rl_rule_state_fn fn, void *ctx);
/* The states of @keys[0..@n-1] that live rules own, as rl_rule_states_walk() hands them. */
int rl_rule_states_lookup(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u32 clock,
			  const struct rl_rstate_key *keys, size_t n, rl_rule_state_fn fn,
			  void *ctx);
/*
 * The sources blocked by rules, with the time left: a table (@w NULL, none
 * printed when none is blocked) or a "blocked" array in the object @w is in.
 * With @max, among the first @max rule states only (top's bound).
 */
/*
 * A command's view once, or with --watch every a->watch_s seconds until a
 * signal or --count views: redrawn in place on a terminal, one after
 * another on a pipe, one JSON object per line with --json. Returns @show's
 * status (the last one's).
 */
typedef int (*rl_view_fn)(const struct rl_args *a, void *ctx);
int rl_watch_views(const char *cmd, const struct rl_args *a, rl_view_fn show, void *ctx);
int rl_blocked_show(const struct rl_pins *pins, const struct rl_config *def, __u64 max,
		    struct rl_json *w);

#endif /* RL_CLI_H */
