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

/* Is @o one of the orphans the command's target names (any, without one)? */
static bool targeted(const struct rl_orphan *o, const char *ifname, bool by_ns, __u64 ino)
{
	return (!ifname || !strcmp(o->name, ifname)) && (!by_ns || o->netns_ino == ino);
}

int cmd_cleanup(const struct rl_args *a)
{
	static struct rl_orphan o[MAX_ORPHANS];
	const char *ifname = a->npos ? a->pos[0] : NULL;
	bool dry = a->dry_run, by_ns = a->netns != NULL;
	struct rl_json w;
	char err[RL_ERRLEN];
	int n, lock, ret = 0, removed = 0;
	__u64 ino = 0;

	/* The target first: a namespace that cannot be found is a bad option, nothing done. */
	if (by_ns && rl_netns_resolve(a->netns, &ino, err, sizeof(err))) {
		pr_err("cleanup: --netns: %s", err);
		return 2;
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
	if (a->json) {
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_name(&w, dry ? "would_remove" : "removed");
		jw_start_array(&w);
	}
	for (int i = 0; i < n; i++) {
		int r = 0;

		if (!targeted(&o[i], ifname, by_ns, ino))
			continue;
		if (!dry)
			r = rl_orphan_remove(&o[i]);
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
			printf("%s %s (was %s, ifindex %u, network namespace %llu)\n",
			       dry ? "would remove" : "removed", o[i].path, o[i].name, o[i].ifindex,
			       (unsigned long long)o[i].netns_ino);
		}
		removed++;
	}
	rl_unlock(lock);
	if (a->json) {
		jw_end_array(&w);
		jw_end_object(&w);
		jw_end(&w);
	} else if (!removed && !ret) {
		printf("no orphaned pins");
		if (ifname)
			printf(" for %s", ifname);
		if (by_ns)
			printf(" in network namespace %llu", (unsigned long long)ino);
		printf("%s\n", dry ? " to remove" : "");
	}
	return ret;
}
