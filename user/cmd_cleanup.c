// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* cleanup: remove the pins that no program uses any more, in every network namespace. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "env.h"
#include "lock.h"
#include "pins.h"
#include "xdp_attach.h"

/* Orphans removed in one run at most; a second run removes the rest. */
#define MAX_ORPHANS 256

static void cleanup_usage(FILE *f)
{
	fprintf(f, "Usage: " RL_PROG " cleanup [--json]\n"
		   "\n"
		   "Removes every orphaned pin directory under " RL_PIN_ROOT ": maps that no\n"
		   "loaded program uses any more, because their network namespace or their\n"
		   "interface was deleted, or a command was killed. The pins of a live limiter,\n"
		   "in whichever namespace, are never removed. \"" RL_PROG " status\" lists them.\n"
		   "\n"
		   "Options:\n"
		   "  --json            print what was removed as JSON\n");
}

int cmd_cleanup(int argc, char **argv)
{
	static struct rl_orphan o[MAX_ORPHANS];
	char err[RL_ERRLEN];
	bool json = false;
	int n, lock, ret = 0, removed = 0;

	for (int i = 1; i < argc; i++) {
		if (rl_is_help(argv[i])) {
			cleanup_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else {
			pr_err("cleanup: unknown option '%s' (see " RL_PROG " cleanup --help)",
			       argv[i]);
			return 2;
		}
	}
	if (rl_check_env(err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	rl_loader_quiet();
	/* An attach holds it from pinning to attaching: its pins are unused until then. */
	lock = rl_lock(err, sizeof(err));
	if (lock < 0) {
		pr_err("%s", err);
		return 1;
	}
	n = rl_list_orphans(o, MAX_ORPHANS);
	if (json)
		printf("{\"removed\":[");
	for (int i = 0; i < n; i++) {
		int r = rl_orphan_remove(&o[i]);

		if (r) {
			pr_err("couldn't remove %s: %s", o[i].path, strerror(-r));
			ret = 1;
			continue;
		}
		if (json) {
			printf("%s{\"iface\":", removed ? "," : "");
			rl_json_str(stdout, o[i].name);
			printf(",\"netns_ino\":%llu,\"ifindex\":%u,\"pins\":",
			       (unsigned long long)o[i].netns_ino, o[i].ifindex);
			rl_json_str(stdout, o[i].path);
			printf("}");
		} else {
			printf("removed %s (was %s, ifindex %u, network namespace %llu)\n", o[i].path,
			       o[i].name, o[i].ifindex, (unsigned long long)o[i].netns_ino);
		}
		removed++;
	}
	rl_unlock(lock);
	if (json)
		printf("]}\n");
	else if (!removed && !ret)
		printf("no orphaned pins\n");
	return ret;
}
