// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit: global options, then the command (see cli.c for the table). */
#include <stdio.h>
#include "cli.h"

int main(int argc, char **argv)
{
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
	/* The command, from the table: help is one of its rows. */
	return rl_cmd_select(NULL, argc - first + 1, argv + first - 1);
}
