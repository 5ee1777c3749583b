// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit: the command dispatcher. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "policy.h"

#define RL_VERSION "0.1.0"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "attach", cmd_attach, "attach the limiter to an interface" },
	{ "set", cmd_set, "change the policy of a running limiter" },
	{ "detach", cmd_detach, "remove the limiter and its pins" },
	{ "status", cmd_status, "where it is attached, how, with which policy" },
	{ "stats", cmd_stats, "counters, or live per-second rates with --watch" },
	{ "top", cmd_top, "the sources nearest to or over their limit" },
	{ "cleanup", cmd_cleanup, "remove orphaned pins (their namespace or interface is gone)" },
	{ "simulate", cmd_simulate, "replay a packet trace through the rate algorithms" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " RL_PROG " [-v] COMMAND [OPTIONS]\n"
		"       " RL_PROG " COMMAND --help\n"
		"\n"
		"A per-source packet rate limiter at XDP, the earliest point of the receive\n"
		"path, and the tools to configure and watch it.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n"
		   "Options:\n"
		   "  -v, --verbose  also show debug messages (libbpf's among them)\n"
		   "  -h, --help     this text\n"
		   "  --version      print the version\n"
		   "\n%s",
		rl_policy_help);
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			rl_verbose = 1;
		} else if (rl_is_help(argv[i])) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf(RL_PROG " " RL_VERSION "\n");
			return 0;
		} else {
			pr_err("unknown option '%s' (see " RL_PROG " --help)", argv[i]);
			return 2;
		}
	}
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (!strcmp(argv[i], commands[c].name))
			return commands[c].fn(argc - i, argv + i);
	pr_err("unknown command '%s' (see " RL_PROG " --help)", argv[i]);
	return 2;
}
