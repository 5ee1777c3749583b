// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit: global options, then the command (see cli.c for the table). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

int main(int argc, char **argv)
{
	const struct rl_cmd *cmd;
	char err[RL_ERRLEN];
	struct rl_args a;
	int first;

	/*
	 * Global options before the command: parse up to the first word
	 * ('+': getopt stops there). The command parses the rest, globals
	 * included, so -v works on either side.
	 */
	rl_args_defaults(&a);
	first = rl_args_parse(&a, RL_G_GLOBAL, -1, argc, argv, err, sizeof(err));
	if (first < 0) {
		pr_err("%s (see " RL_PROG " --help)", err);
		return 2;
	}
	rl_verbose = a.verbose;
	if (a.help) {
		rl_usage(stdout);
		return 0;
	}
	if (a.version && first < argc) {
		pr_err("--version takes no argument ('%s' follows it; see " RL_PROG " --help)",
		       argv[first]);
		return 2;
	}
	if (a.version) {
		printf(RL_PROG " " RL_VERSION "\n");
		return 0;
	}
	if (first == argc) {
		rl_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[first], "help")) {
		if (first + 1 < argc && (cmd = rl_cmd_find(argv[first + 1]))) {
			rl_cmd_usage(stdout, cmd);
			return 0;
		}
		rl_usage(stdout);
		return 0;
	}
	cmd = rl_cmd_find(argv[first]);
	if (!cmd) {
		pr_err("unknown command '%s' (see " RL_PROG " --help)", argv[first]);
		return 2;
	}
	return rl_cmd_run(cmd, argc - first, argv + first);
}
