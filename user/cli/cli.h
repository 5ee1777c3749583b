/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The CLI on top of the library: the command table, logging, what commands share. */
#ifndef RL_CLI_H
#define RL_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include "log.h"
#include "opts.h"

#define RL_VERSION "0.2.0"

/* A command: its options are the groups it names (and the global ones). */
struct rl_cmd {
	const char *name;
	int (*fn)(const struct rl_args *a);
	unsigned int groups; /* enum rl_opt_group */
	int min_pos, max_pos; /* words besides options (the interface) */
	const char *synopsis; /* after "xdp-ratelimit NAME " */
	const char *summary; /* one line, for the command list */
	const char *description; /* --help's prose; paragraphs end in "\n" */
};

/*
 * In rl_cmd.groups: the command parses its own words (a->argc, a->argv), as
 * rule add hands a rule's words to rl_rule_parse(); its groups are what it
 * documents.
 */
#define RL_CMD_RAW (1U << 31)

extern const struct rl_cmd rl_cmds[];
extern const size_t rl_ncmds;

const struct rl_cmd *rl_cmd_find(const char *name);
/* Parse a command's arguments (argv[0] is the command) and run it: its exit status. */
int rl_cmd_run(const struct rl_cmd *cmd, int argc, char **argv);
void rl_cmd_usage(FILE *f, const struct rl_cmd *cmd);
void rl_usage(FILE *f);

int cmd_simulate(const struct rl_args *a);
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
int cmd_rule(const struct rl_args *a);
int cmd_blocked(const struct rl_args *a);
int cmd_unblock(const struct rl_args *a);
int cmd_sync(const struct rl_args *a);
/*
 * The sources blocked by rules, with the time left: a table (@w NULL, none
 * printed when none is blocked) or a "blocked" array in the object @w is in.
 */
struct rl_pins;
struct rl_config;
struct rl_json;
int rl_blocked_show(const struct rl_pins *pins, const struct rl_config *def, struct rl_json *w);

#endif /* RL_CLI_H */
