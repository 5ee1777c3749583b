// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Another XDP program on the interface: attach refuses it before changing
 * anything, names the program and the way out, and says whether libxdp's
 * dispatcher (the only way to share an interface) can run on this kernel.
 * What the kernel allows is found independently: xdp-loader loading two
 * programs on one interface needs the dispatcher, and succeeds only where
 * it runs. The other program is libxdp's own xdp_pass, loaded with
 * xdp-loader (it pins nothing). Everything happens in a namespace pair the
 * test makes and removes.
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netns.h"
#include "test.h"

#define SECOND_IF "rlx.co0"

/* libxdp's xdp-dispatcher.o (Debian's libxdp1), or false. */
static bool dispatcher_obj(char *path, size_t len)
{
	glob_t g = {};
	bool ok = !glob("/usr/lib/*/bpf/xdp-dispatcher.o", 0, NULL, &g) && g.gl_pathc;

	if (ok)
		snprintf(path, len, "%s", g.gl_pathv[0]);
	globfree(&g);
	return ok;
}

TEST_FLAGS(coexist_other_program, RL_TEST_ROOT)
{
	char obj[256], pins[512], want[256], *err = NULL, *out = NULL;
	unsigned int before = 0, after = 0;
	bool dispatcher_runs, other = false, ours = false;
	struct rl_ns ns;

	if (!ASSERT_TRUE(dispatcher_obj(obj, sizeof(obj)), "libxdp's xdp-dispatcher.o") ||
	    !ASSERT_OK(access("/usr/sbin/xdp-loader", X_OK), "xdp-loader (make deps: xdp-tools)"))
		return;
	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespaces"))
		goto out;

	/*
	 * What this kernel allows, asked of libxdp itself: two programs on one
	 * interface (a veth of the receiving namespace) need its dispatcher.
	 */
	if (!ASSERT_OK(rl_ns_rx_sh(&ns, NULL,
				   "ip link add " SECOND_IF " type veth peer name " SECOND_IF
				   "p && ip link set " SECOND_IF " up && ip link set " SECOND_IF
				   "p up"),
		       "a second interface"))
		goto out;
	dispatcher_runs = !rl_ns_rx_sh(
		&ns, NULL, "xdp-loader load -m skb -n xdp_pass " SECOND_IF " %s %s >/dev/null 2>&1",
		obj, obj);
	rl_ns_rx_sh(&ns, NULL, "xdp-loader unload " SECOND_IF " --all >/dev/null 2>&1");

	/* Another program, attached alone as libxdp does when it cannot use its dispatcher. */
	if (!ASSERT_OK(rl_ns_rx_sh(&ns, NULL, "xdp-loader load -m skb -n xdp_pass %s %s", ns.rx_if,
				   obj),
		       "xdp-loader loads the other program"))
		goto out;
	other = true;
	if (!ASSERT_OK(rl_ns_xdp_prog_id(&ns, &before), "its id") || !ASSERT_TRUE(before, "its id"))
		goto out;

	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "attach %s --rate 100", ns.rx_if), 1,
		  "attach refuses the interface");
	snprintf(want, sizeof(want), "couldn't attach to '%s': 'xdp_pass' (id %u, skb) is attached",
		 ns.rx_if, before);
	ASSERT_CONTAINS(err, want, "the message names the other program");
	snprintf(want, sizeof(want), "xdp-loader unload %s --all first", ns.rx_if);
	ASSERT_CONTAINS(err, want, "and the way out");
	if (dispatcher_runs)
		ASSERT_CONTAINS(err, "xdp-ratelimit attaches alone, not behind libxdp's dispatcher",
				"the dispatcher runs here: the cause is ours");
	else
		ASSERT_CONTAINS(err, "whose freplace programs this kernel refuses",
				"xdp-loader could not share an interface: the message says why");
	free(out);
	free(err);
	out = err = NULL;
	/* Nothing changed: the other program is still there, no pins of ours. */
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &after), "the id after");
	ASSERT_EQ(after, before, "the other program is untouched");
	if (ASSERT_OK(rl_ns_pin_dir(ns.rx, ns.rx_if, pins, sizeof(pins)), "pin directory"))
		ASSERT_TRUE(access(pins, F_OK) != 0, "no pins left");
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "attach %s --rate 100 --json", ns.rx_if), 1,
		  "attach --json refuses too");
	ASSERT_CONTAINS(out, "{\"error\":\"couldn't attach to", "as JSON");
	free(out);
	out = NULL;

	/* The way out works. */
	if (!ASSERT_OK(rl_ns_rx_sh(&ns, NULL, "xdp-loader unload %s --all", ns.rx_if),
		       "xdp-loader unload"))
		goto out;
	other = false;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "attach %s --rate 100 --mode skb", ns.rx_if), 0,
		  "attach once the interface is free");
	ours = true;
	/* The other way round: libxdp refuses to put a program next to ours. */
	ASSERT_TRUE(rl_ns_rx_sh(&ns, NULL, "xdp-loader load -m skb -n xdp_pass %s %s 2>/dev/null",
				ns.rx_if, obj) != 0,
		    "xdp-loader refuses the interface xdp-ratelimit is on");
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "status %s --json", ns.rx_if), 0, "status");
	ASSERT_CONTAINS(out, "\"mode\":\"skb\"", "the limiter is still attached");
out:
	if (ours)
		rl_ns_cli(&ns, NULL, NULL, "detach %s", ns.rx_if);
	if (other)
		rl_ns_rx_sh(&ns, NULL, "xdp-loader unload %s --all", ns.rx_if);
	rl_ns_destroy(&ns);
	free(out);
	free(err);
}
