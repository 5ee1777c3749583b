// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* cleanup: remove the pins that no program uses any more, in every network namespace. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "env.h"
#include "json_writer.h"
#include "lock.h"
#include "pins.h"
#include "xdp_attach.h"

/* Orphans removed in one run at most; a second run removes the rest. */
#define MAX_ORPHANS 256

int cmd_cleanup(const struct rl_args *a)
{
	static struct rl_orphan o[MAX_ORPHANS];
	struct rl_json w;
	char err[RL_ERRLEN];
	int n, lock, ret = 0, removed = 0;
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
	if (a->json) {
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_name(&w, "removed");
		jw_start_array(&w);
	}
	for (int i = 0; i < n; i++) {
		int r = rl_orphan_remove(&o[i]);

		if (r) {
			pr_err("couldn't remove %s: %s", o[i].path, strerror(-r));
			ret = 1;
			continue;
		}
		if (a->json) {
			jw_start_object(&w);
			jw_string_field(&w, "iface", o[i].name);
			jw_uint_field(&w, "netns_ino", o[i].netns_ino);
			jw_uint_field(&w, "ifindex", o[i].ifindex);
			jw_string_field(&w, "pins", o[i].path);
			jw_end_object(&w);
		} else {
			printf("removed %s (was %s, ifindex %u, network namespace %llu)\n",
			       o[i].path, o[i].name, o[i].ifindex,
			       (unsigned long long)o[i].netns_ino);
		}
		removed++;
	}
	rl_unlock(lock);
	if (a->json) {
		jw_end_array(&w);
		jw_end_object(&w);
		jw_end(&w);
	} else if (!removed && !ret)
		printf("no orphaned pins\n");
	return ret;
}
