/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Shared by the command implementations. */
#ifndef RL_CLI_H
#define RL_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define RL_PROG "xdp-ratelimit"

extern int rl_verbose;

/* One log function: errors and warnings to stderr, prefixed with the program name. */
void rl_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_err(...) rl_log("error", __VA_ARGS__)
#define pr_warn(...) rl_log("warning", __VA_ARGS__)
#define pr_debug(...)                                  \
	do {                                           \
		if (rl_verbose)                        \
			rl_log("debug", __VA_ARGS__);  \
	} while (0)

/* True if @arg is -h or --help. */
bool rl_is_help(const char *arg);
/* Print a JSON string literal. */
void rl_json_str(FILE *f, const char *s);

int cmd_simulate(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_cleanup(int argc, char **argv);

#endif /* RL_CLI_H */
