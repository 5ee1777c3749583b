// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Several interfaces sharing one limiter (attach --share), as root, in
 * namespaces of their own: two veth pairs from one sending namespace into one
 * receiving namespace, the limiter on both receiving ends.
 *
 *	share_limits_across_members	one source through both, each at 2x its
 *					rate, passes r t + b in all; stats is the same
 *					on either name; with a limiter of its own on
 *					each, the same flood passes about twice that
 *	share_set_under_flood		set on one member swaps the program of
 *					both, and every frame is counted once
 *	share_set_failure_rolls_back	a member that refuses the new program:
 *					both keep the old one and the old policy;
 *					set and rule add then reach both
 *	share_detach_member		detaching the interface that made the
 *					limiter leaves the other one limiting
 *	share_events_name_ingress	events on one member names the other for
 *					frames that came in there
 *	share_errors			what --share refuses, leaving nothing
 *	share_apply			share: in a file, idempotent, pruned
 *	share_stale_member_pins		a member's pins left without its program
 *					are stale, not another interface's
 *	share_apply_load		what the file's loader refuses of share:
 *	share_converge			set killed between the two members: set or
 *					apply with the same policy puts both on one
 *					program again
 *	share_crash_sigkill		attach --share, set and detach killed at
 *					random moments: each member runs the
 *					limiter iff status says so, and running the
 *					command again finishes the job
 *
 * Each test checks at its end that no pin of the receiving namespace is left.
 * The source, 198.18.3.7, is off the receiving end's subnet, so its kernel
 * has nothing to send back; the sending ends have IPv6 disabled.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "apply.h"
#include "metrics.h"
#include "netns.h"
#include "pins.h"
#include "test.h"
#include "xdp_attach.h"

#define SRC "198.18.3.7"
/*
 * The flood: each pair at 200/s (trafgen -t 5ms), twice RATE, the source as a
 * whole at four times it. r t + b holds only while the source sends over r all
 * along: trafgen paces with a sleep per frame, and on a loaded machine each
 * sleep oversleeps by a millisecond or more (at -t 1ms, a third of the rate
 * was seen), and the two flows need not overlap exactly; so a slow rate, long
 * gaps, over the limit through either pair alone, and a bucket of a second.
 */
#define RATE   100
#define BURST  100
#define GAP    "5ms"
#define POLICY "--rate 100 --burst 100"

/* Two pairs into one receiving namespace: b holds the second pair's names only. */
struct two {
	struct rl_ns ns;
	struct rl_ns b; /* tx_if, rx_if, rx_mac of the second pair; never destroyed itself */
	char nsdir[PATH_MAX]; /* the receiving namespace's pin directory */
};

static bool two_create(struct two *t)
{
	char *out = NULL, *p, pin[PATH_MAX];
	bool ok;

	memset(t, 0, sizeof(*t));
	if (!ASSERT_OK(rl_ns_create(&t->ns), "make the namespace pair"))
		return false;
	t->b = t->ns;
	t->b.up = false;
	memset(t->b.flows, 0, sizeof(t->b.flows));
	snprintf(t->b.tx_if, sizeof(t->b.tx_if), "%.13sb", t->ns.tx_if);
	snprintf(t->b.rx_if, sizeof(t->b.rx_if), "%.13sb", t->ns.rx_if);
	if (!ASSERT_OK(
		    rl_sh(NULL,
			  "set -e; ip link add %1$s netns %2$s type veth peer name %3$s netns %4$s;"
			  " ip netns exec %2$s sysctl -qw net.ipv6.conf.%1$s.disable_ipv6=1;"
			  " ip -n %2$s link set %1$s up; ip -n %4$s link set %3$s up",
			  t->b.tx_if, t->ns.tx, t->b.rx_if, t->ns.rx),
		    "make the second pair"))
		return false;
	ok = ASSERT_OK(rl_sh(&out, "ip -n %s -o link show dev %s", t->ns.rx, t->b.rx_if),
		       "the second pair's address");
	p = out ? strstr(out, "link/ether ") : NULL;
	ok = ok && ASSERT_TRUE(p && sscanf(p, "link/ether %17s", t->b.rx_mac) == 1,
			       "a MAC address on the second pair");
	free(out);
	if (!ok || !ASSERT_OK(rl_ns_pin_dir(t->ns.rx, "x", pin, sizeof(pin)), "pin directory"))
		return false;
	*strrchr(pin, '/') = '\0';
	snprintf(t->nsdir, sizeof(t->nsdir), "%s", pin);
	return true;
}

/* Detach both, delete the namespaces, and check that no pin is left of them. */
static void two_destroy(struct two *t)
{
	if (!t->ns.up)
		return;
	rl_ns_cli(&t->ns, NULL, NULL, "detach %s 2>/dev/null", t->b.rx_if);
	rl_ns_destroy(&t->ns);
	if (t->nsdir[0]) {
		ASSERT_TRUE(access(t->nsdir, F_OK) != 0, "no pin of the namespace is left");
		rl_sh(NULL, "rm -rf '%s'; rmdir " RL_PIN_ROOT " 2>/dev/null; true", t->nsdir);
	}
}

/* "xdp-ratelimit ARGS" in the receiving namespace: its exit status, what it printed. */
static int cli(struct two *t, char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int cli(struct two *t, char **out, char **err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = rl_cli_vin(t->ns.rx, out, err, fmt, ap);
	va_end(ap);
	return ret;
}

static bool attach_first(struct two *t)
{
	char args[128];

	snprintf(args, sizeof(args), "attach %s " POLICY, t->ns.rx_if);
	return rl_ns_cli_ok(&t->ns, "attach the first", args);
}

static bool attach_both(struct two *t, const char *policy)
{
	char args[256];

	snprintf(args, sizeof(args), "attach %s %s", t->ns.rx_if, policy);
	if (!rl_ns_cli_ok(&t->ns, "attach the first", args))
		return false;
	snprintf(args, sizeof(args), "attach %s --share %s", t->b.rx_if, t->ns.rx_if);
	return rl_ns_cli_ok(&t->ns, "attach the second --share the first", args);
}

/* The id of the XDP program on @ifname of the receiving namespace (0: none). */
static unsigned int prog_id(struct two *t, const char *ifname)
{
	char *out = NULL, *p;
	unsigned int id = 0;

	if (!rl_sh(&out, "ip -n %s -o link show dev %s", t->ns.rx, ifname) && out &&
	    (p = strstr(out, "prog/xdp")) && (p = strstr(p, " id ")))
		sscanf(p + 4, "%u", &id);
	free(out);
	return id;
}

/* The ifindex of @ifname in the receiving namespace (0: none). */
static unsigned long long ifindex_of(struct two *t, const char *ifname)
{
	unsigned long long i = 0;
	char *out = NULL;

	if (!rl_sh(&out, "ip -n %s -o link show dev %s", t->ns.rx, ifname) && out)
		i = strtoull(out, NULL, 10);
	free(out);
	return i;
}

/* The ifindex rl_ctl records in the pin directory @dir (~0: unreadable). */
static unsigned long long ctl_ifindex(const char *dir)
{
	unsigned long long i = ~0ULL;
	char *out = NULL;

	if (rl_sh(&out, "bpftool -j map dump pinned %s/rl_ctl", dir) ||
	    !rl_json_u64(out, "ifindex", &i))
		i = ~0ULL;
	free(out);
	return i;
}

/* A number of "stats IFACE --json"; ~0 if it could not be read. */
static unsigned long long stat_of(struct two *t, const char *ifname, const char *key)
{
	unsigned long long v = ~0ULL;
	char *out = NULL;

	if (cli(t, &out, NULL, "stats %s --json", ifname) || !rl_json_u64(out, key, &v))
		v = ~0ULL;
	free(out);
	return v;
}

/* One source through both pairs, @per packets each at 200/s (each 2x RATE). */
static bool flood_both(struct two *t, struct rl_watch *w, struct rl_flow f[2], unsigned long per)
{
	memset(w, 0, sizeof(*w));
	for (int i = 0; i < 2; i++) {
		f[i] = (struct rl_flow){ .src = SRC, .count = per, .gap = GAP, .limit_s = 20 };
		w->flows[i] = &f[i];
	}
	f[1].via = &t->b;
	w->nflows = 2;
	return ASSERT_OK(rl_ns_watch(&t->ns, w), "send through both pairs") &&
	       ASSERT_EQ(f[0].sent, per, "trafgen sent through the first") &&
	       ASSERT_EQ(f[1].sent, per, "trafgen sent through the second");
}

TEST_FLAGS(share_limits_across_members, RL_TEST_ROOT)
{
	unsigned long long passed, rx, control, pa, pb;
	struct rl_flow f[2];
	struct rl_watch w;
	double span, expected, pause = 0;
	struct two t;
	char args[128];

	memset(&w, 0, sizeof(w));
	if (!two_create(&t) || !attach_both(&t, POLICY))
		goto out;
	if (!flood_both(&t, &w, f, 600))
		goto out;
	passed = w.end.passed - w.base.passed;
	rx = w.end.rx_packets - w.base.rx_packets;
	span = w.last - w.first;
	expected = BURST + RATE * span;
	/* The longest pause in arrivals: over b / r, the bucket fills up and r t + b overstates. */
	for (int i = 1, last = 0; i < w.n; i++)
		if (w.s[i].rx != w.s[i - 1].rx) {
			if (last && w.s[i].t - w.s[last].t > pause)
				pause = w.s[i].t - w.s[last].t;
			last = i;
		}
	printf("    shared: %llu of %llu passed over %.3f s, r t + b = %.0f (%+.2f%%); longest "
	       "pause %.3f s\n",
	       passed, rx, span, expected, 100.0 * ((double)passed - expected) / expected, pause);
	/* The counters of both members are one set: the shared map counts both pairs. */
	ASSERT_EQ(rx, f[0].sent + f[1].sent, "one set of counters sees both pairs");
	ASSERT_TRUE(rx >= 1.6 * expected, "the source sent well over its limit");
	ASSERT_TRUE(passed >= 0.95 * expected && passed <= 1.05 * expected,
		    "passed within 5% of r t + b across both interfaces");
	/* stats on either name: the same numbers. */
	ASSERT_EQ(stat_of(&t, t.b.rx_if, "passed"), stat_of(&t, t.ns.rx_if, "passed"),
		  "stats on either member: passed");
	ASSERT_EQ(stat_of(&t, t.b.rx_if, "dropped"), stat_of(&t, t.ns.rx_if, "dropped"),
		  "stats on either member: dropped");
	ASSERT_EQ(stat_of(&t, t.b.rx_if, "rx_packets"), stat_of(&t, t.ns.rx_if, "rx_packets"),
		  "stats on either member: rx_packets");

	/* The control: a limiter of its own on each interface lets about twice as much pass. */
	rl_watch_free(&w);
	snprintf(args, sizeof(args), "detach %s", t.b.rx_if);
	if (!rl_ns_cli_ok(&t.ns, "detach the second", args))
		goto out;
	snprintf(args, sizeof(args), "attach %s " POLICY, t.b.rx_if);
	if (!rl_ns_cli_ok(&t.ns, "attach the second alone", args))
		goto out;
	pa = stat_of(&t, t.ns.rx_if, "passed");
	pb = stat_of(&t, t.b.rx_if, "passed");
	if (!flood_both(&t, &w, f, 600))
		goto out;
	control = stat_of(&t, t.ns.rx_if, "passed") - pa + stat_of(&t, t.b.rx_if, "passed") - pb;
	printf("    a limiter each: %llu passed in all (%.2f x shared)\n", control,
	       (double)control / (double)passed);
	ASSERT_TRUE(control >= 1.5 * passed, "without sharing, well over what passed shared");
out:
	rl_watch_free(&w);
	two_destroy(&t);
}

/* The sets of share_set_under_flood, run from the watch's tick on the second member. */
struct sets {
	struct two *t;
	int done;
	bool failed;
	double next;
	unsigned int ids[8];
};

static int set_tick(struct rl_watch *w, void *arg)
{
	static const char *const rates[] = { "2000", "500", "1500", "1000" };
	struct sets *s = arg;
	char args[128];

	if (w->first < 0 || s->done == 4 || rl_now() < s->next)
		return 0;
	snprintf(args, sizeof(args), "set %s --rate %s", s->t->b.rx_if, rates[s->done]);
	if (!rl_ns_cli_ok(&s->t->ns, "set on the second member during the flood", args)) {
		s->failed = true;
		return 1;
	}
	s->ids[2 * s->done] = prog_id(s->t, s->t->ns.rx_if);
	s->ids[2 * s->done + 1] = prog_id(s->t, s->t->b.rx_if);
	s->done++;
	s->next = rl_now() + 0.4;
	return 0;
}

TEST_FLAGS(share_set_under_flood, RL_TEST_ROOT)
{
	struct sets s = { 0 };
	struct rl_flow f[2];
	struct rl_watch w;
	unsigned int id0;
	unsigned long long rx, passed, dropped;
	struct two t;
	char *out = NULL;

	memset(&w, 0, sizeof(w));
	if (!two_create(&t) || !attach_both(&t, POLICY))
		goto out;
	id0 = prog_id(&t, t.ns.rx_if);
	ASSERT_TRUE(id0 != 0, "a program on the first");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "the same program on both");
	s.t = &t;
	for (int i = 0; i < 2; i++) {
		f[i] = (struct rl_flow){ .src = SRC, .count = 3000, .gap = "1ms", .limit_s = 20 };
		w.flows[i] = &f[i];
	}
	f[1].via = &t.b;
	w.nflows = 2;
	w.tick = set_tick;
	w.arg = &s;
	if (!ASSERT_OK(rl_ns_watch(&t.ns, &w), "send through both pairs"))
		goto out;
	ASSERT_TRUE(!s.failed, "every set succeeded");
	ASSERT_EQ(s.done, 4, "four sets while the frames came");
	for (int i = 0; i < s.done; i++) {
		unsigned int before = i ? s.ids[2 * i - 2] : id0;

		ASSERT_TRUE(s.ids[2 * i] != 0 && s.ids[2 * i] != before,
			    "each set swapped the first member's program");
		ASSERT_EQ(s.ids[2 * i + 1], s.ids[2 * i], "and the second's, to the same one");
	}
	/* Every frame seen once, by the old program or the new one, on either member. */
	rx = w.end.rx_packets - w.base.rx_packets;
	passed = w.end.passed - w.base.passed;
	dropped = w.end.dropped - w.base.dropped;
	printf("    %d sets; %llu frames: %llu passed, %llu dropped\n", s.done, rx, passed,
	       dropped);
	ASSERT_EQ(f[0].sent + f[1].sent, 6000, "trafgen sent every frame");
	ASSERT_EQ(rx, f[0].sent + f[1].sent, "every frame counted once");
	ASSERT_EQ(passed + dropped, rx, "every frame passed or dropped");
	ASSERT_EQ(cli(&t, &out, NULL, "status %s", t.ns.rx_if), 0, "status on the first");
	ASSERT_CONTAINS(out, "1000/s", "the last set's rate, on the first member too");
out:
	free(out);
	rl_watch_free(&w);
	two_destroy(&t);
}

TEST_FLAGS(share_set_failure_rolls_back, RL_TEST_ROOT)
{
	char *err = NULL, *out = NULL, args[64];
	unsigned int id0, id1;
	struct two t;
	int rc;

	if (!two_create(&t) || !attach_both(&t, POLICY))
		goto out;
	id0 = prog_id(&t, t.ns.rx_if);
	/* The second member refuses the new program (XDP_RATELIMIT_FAULT=replace-member). */
	rc = rl_sh(NULL,
		   "XDP_RATELIMIT_FAULT=replace-member nsenter --net=/run/netns/%s "
		   "%s/xdp-ratelimit set %s --rate 5000 2>/tmp/rlt-%d-share.err",
		   t.ns.rx, rl_build_dir, t.ns.rx_if, getpid());
	rl_sh(&err, "cat /tmp/rlt-%d-share.err; rm -f /tmp/rlt-%d-share.err", getpid(), getpid());
	printf("    set with a refusing member: exit %d: %s", rc, err ? err : "\n");
	ASSERT_TRUE(rc != 0, "set fails");
	ASSERT_CONTAINS(err, t.b.rx_if, "the error names the member that refused");
	ASSERT_CONTAINS(err, "nothing changed", "and says nothing changed");
	id1 = prog_id(&t, t.ns.rx_if);
	ASSERT_EQ(id1, id0, "the first member is back on its program");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "the second kept it");
	ASSERT_EQ(cli(&t, &out, NULL, "status %s", t.b.rx_if), 0, "status");
	ASSERT_CONTAINS(out, "token-bucket 100/s", "the old policy is in force");
	/* Then a set that works reaches both. */
	snprintf(args, sizeof(args), "set %s --rate 5000", t.ns.rx_if);
	if (rl_ns_cli_ok(&t.ns, "set without the fault", args)) {
		id1 = prog_id(&t, t.ns.rx_if);
		ASSERT_TRUE(id1 != id0, "a new program");
		ASSERT_EQ(prog_id(&t, t.b.rx_if), id1, "on both members");
	}
	/* A rule added on one member is compiled into the program of both. */
	snprintf(args, sizeof(args), "rule add %s lan --src 198.18.9.0/24 --allow", t.b.rx_if);
	if (rl_ns_cli_ok(&t.ns, "rule add on the second", args)) {
		id0 = prog_id(&t, t.ns.rx_if);
		ASSERT_TRUE(id0 != 0 && id0 != id1, "rule add swapped the first's program");
		ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "and the second's, to the same one");
		free(out);
		out = NULL;
		ASSERT_EQ(cli(&t, &out, NULL, "rule list %s", t.ns.rx_if), 0, "rule list");
		ASSERT_CONTAINS(out, "lan", "the rule, seen from the first");
	}
out:
	free(err);
	free(out);
	two_destroy(&t);
}

/* 600 frames at full speed through the second pair: about the burst passes. */
static void burst_limited_via_second(struct two *t)
{
	struct rl_flow f = { .src = "198.18.3.9", .count = 600, .limit_s = 10 };
	struct rl_watch w = { 0 };

	w.flows[0] = &f;
	w.nflows = 1;
	/* The watch reads the second's pins: the first has none now. */
	if (!ASSERT_OK(rl_ns_watch(&t->b, &w), "send through the second pair"))
		goto out;
	ASSERT_EQ(w.end.rx_packets - w.base.rx_packets, 600, "the limiter saw every frame");
	ASSERT_TRUE(w.end.dropped - w.base.dropped >= 300, "it still limits");
out:
	rl_watch_free(&w);
}

TEST_FLAGS(share_detach_member, RL_TEST_ROOT)
{
	char *out = NULL, args[64], pin[PATH_MAX];
	unsigned int id0;
	struct two t;

	if (!two_create(&t) || !attach_both(&t, "--rate 100 --burst 100"))
		goto out;
	id0 = prog_id(&t, t.b.rx_if);
	/* The first made the maps (rl_ctl names it): detach it, the second keeps them. */
	snprintf(args, sizeof(args), "detach %s", t.ns.rx_if);
	ASSERT_EQ(cli(&t, &out, NULL, "%s", args), 0, "detach the first");
	ASSERT_CONTAINS(out, t.b.rx_if, "detach says which interface keeps the limiter");
	free(out);
	out = NULL;
	ASSERT_EQ(prog_id(&t, t.ns.rx_if), 0, "nothing on the first");
	ASSERT_OK(rl_ns_pin_dir(t.ns.rx, t.ns.rx_if, pin, sizeof(pin)), "its pin directory");
	ASSERT_TRUE(access(pin, F_OK) != 0, "its pins are gone");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "the second runs the same program");
	/* rl_ctl, which names the interface the maps belong to, was handed to the second. */
	ASSERT_OK(rl_ns_pin_dir(t.ns.rx, t.b.rx_if, pin, sizeof(pin)), "its pin directory");
	ASSERT_EQ(ctl_ifindex(pin), ifindex_of(&t, t.b.rx_if), "rl_ctl names the second now");
	ASSERT_EQ(cli(&t, &out, NULL, "status %s", t.b.rx_if), 0, "status on the second");
	ASSERT_TRUE(out && !strstr(out, "shares"), "it shares with nobody now");
	burst_limited_via_second(&t);
	snprintf(args, sizeof(args), "set %s --rate 200", t.b.rx_if);
	rl_ns_cli_ok(&t.ns, "set on the second alone", args);
	/* The other way round: attach the first again sharing the second, detach the second. */
	snprintf(args, sizeof(args), "attach %s --share %s", t.ns.rx_if, t.b.rx_if);
	if (!rl_ns_cli_ok(&t.ns, "share again", args))
		goto out;
	snprintf(args, sizeof(args), "detach %s", t.b.rx_if);
	rl_ns_cli_ok(&t.ns, "detach the second", args);
	ASSERT_EQ(cli(&t, NULL, NULL, "stats %s", t.ns.rx_if), 0, "the first still has stats");
	ASSERT_TRUE(prog_id(&t, t.ns.rx_if) != 0, "and a program");
out:
	free(out);
	two_destroy(&t);
}

TEST_FLAGS(share_events_name_ingress, RL_TEST_ROOT)
{
	char *out = NULL, *pid = NULL, file[64], want[64];
	struct rl_flow f = { .src = SRC, .count = 400, .limit_s = 10 };
	struct rl_watch w = { 0 };
	struct two t;

	if (!two_create(&t) || !attach_both(&t, "--rate 10 --burst 10"))
		goto out;
	/* A reader on the first member, frames over the limit through the second. */
	snprintf(file, sizeof(file), "/tmp/rlt-%d-share-events", getpid());
	if (!ASSERT_OK(rl_sh(&pid,
			     "nsenter --net=/run/netns/%s %s/xdp-ratelimit events %s --json "
			     "--count 5 --duration 8s >%s 2>&1 </dev/null & echo $!; sleep 1",
			     t.ns.rx, rl_build_dir, t.ns.rx_if, file),
		       "start events"))
		goto out;
	f.via = &t.b;
	w.flows[0] = &f;
	w.nflows = 1;
	ASSERT_OK(rl_ns_watch(&t.ns, &w), "send through the second pair");
	/* events ends after 5 samples (at most 8 s). */
	rl_sh(&out,
	      "for i in $(seq 80); do [ $(wc -l <%s) -ge 5 ] && break; sleep 0.1; done;"
	      " cat %s; rm -f %s",
	      file, file, file);
	snprintf(want, sizeof(want), "\"iface\":\"%s\"", t.b.rx_if);
	ASSERT_CONTAINS(out, want, "a sample names the interface it came in on");
	snprintf(want, sizeof(want), "\"iface\":\"%s\"", t.ns.rx_if);
	ASSERT_TRUE(out && !strstr(out, want), "not the one events was given");
out:
	free(out);
	rl_watch_free(&w);
	/* It ends by itself (--count, --duration); if not, by its pid. */
	if (pid && atoi(pid) > 0)
		kill(atoi(pid), SIGTERM);
	free(pid);
	two_destroy(&t);
}

TEST_FLAGS(share_errors, RL_TEST_ROOT)
{
	char *err = NULL, pin[PATH_MAX];
	struct two t;

	if (!two_create(&t))
		goto out;
	ASSERT_OK(rl_ns_pin_dir(t.ns.rx, t.b.rx_if, pin, sizeof(pin)), "pin directory");
	/* Nothing to share yet. */
	ASSERT_EQ(cli(&t, NULL, &err, "attach %s --share %s", t.b.rx_if, t.ns.rx_if), 1,
		  "--share of an interface without the limiter");
	ASSERT_CONTAINS(err, "not attached", "says so");
	free(err);
	err = NULL;
	if (!attach_first(&t))
		goto out;
	/* The sending end's interface is in another namespace. */
	ASSERT_EQ(cli(&t, NULL, &err, "attach %s --share %s", t.b.rx_if, t.ns.tx_if), 1,
		  "--share of an interface of another namespace");
	ASSERT_CONTAINS(err, "in this network namespace", "says where it looked");
	free(err);
	err = NULL;
	ASSERT_EQ(cli(&t, NULL, &err, "attach %s --share %s", t.ns.rx_if, t.ns.rx_if), 1,
		  "sharing with itself");
	ASSERT_CONTAINS(err, "its own limiter", "says so");
	free(err);
	err = NULL;
	ASSERT_EQ(cli(&t, NULL, &err, "attach %s --share %s --rate 5", t.b.rx_if, t.ns.rx_if), 2,
		  "--share with a policy");
	ASSERT_CONTAINS(err, "policy", "says the policy is the shared limiter's");
	free(err);
	err = NULL;
	ASSERT_TRUE(access(pin, F_OK) != 0, "no pins for the refused interface");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), 0, "no program on it");
	/* Shared once: a second time is refused, naming the limiter. */
	if (ASSERT_EQ(cli(&t, NULL, NULL, "attach %s --share %s", t.b.rx_if, t.ns.rx_if), 0,
		      "share the first's")) {
		ASSERT_EQ(cli(&t, NULL, &err, "attach %s --share %s", t.b.rx_if, t.ns.rx_if), 1,
			  "again");
		ASSERT_CONTAINS(err, "already", "it shares it already");
		free(err);
		err = NULL;
		ASSERT_EQ(cli(&t, NULL, &err, "attach %s " POLICY, t.b.rx_if), 1,
			  "a limiter of its own on a member");
		ASSERT_CONTAINS(err, "already attached", "is refused");
	}
out:
	free(err);
	two_destroy(&t);
}

/* Write @text to a file of this test; its path in @path. */
static bool write_yaml(char *path, size_t len, const char *text)
{
	FILE *f;

	snprintf(path, len, "/tmp/rlt-%d-share.yaml", getpid());
	f = fopen(path, "w");
	if (!ASSERT_TRUE(f != NULL, "write the file"))
		return false;
	fputs(text, f);
	fclose(f);
	return true;
}

TEST_FLAGS(share_apply, RL_TEST_ROOT)
{
	char path[64], text[512], args[64], *out = NULL, *err = NULL;
	unsigned int id0, id1;
	struct two t;

	if (!two_create(&t))
		goto out;
	/* The sharing interface first: apply attaches what it shares before it. */
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    share: %s\n  %s:\n    rate: 1000\n    burst: 100\n",
		 t.b.rx_if, t.ns.rx_if, t.ns.rx_if);
	if (!write_yaml(path, sizeof(path), text))
		goto out;
	if (!ASSERT_EQ(cli(&t, &out, NULL, "apply %s", path), 0, "apply"))
		goto out;
	ASSERT_CONTAINS(out, "share", "the second is attached sharing");
	free(out);
	out = NULL;
	id0 = prog_id(&t, t.ns.rx_if);
	ASSERT_TRUE(id0 != 0, "a program on the first");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "the same on the second");
	/* The same file again: nothing changes. */
	ASSERT_EQ(cli(&t, &out, NULL, "apply %s", path), 0, "apply again");
	ASSERT_TRUE(out && !strstr(out, ": set") && !strstr(out, ": share") &&
			    !strstr(out, ": attach"),
		    "nothing to do");
	free(out);
	out = NULL;
	ASSERT_EQ(prog_id(&t, t.ns.rx_if), id0, "the same program");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "on both");
	/* A new rate: set once, live on both. */
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    share: %s\n  %s:\n    rate: 2000\n    burst: 100\n",
		 t.b.rx_if, t.ns.rx_if, t.ns.rx_if);
	if (!write_yaml(path, sizeof(path), text) ||
	    !ASSERT_EQ(cli(&t, NULL, NULL, "apply %s", path), 0, "apply a new rate"))
		goto out;
	id1 = prog_id(&t, t.ns.rx_if);
	ASSERT_TRUE(id1 != 0 && id1 != id0, "a new program");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id1, "on both members");
	/* Each with a limiter of its own in the file: refused, nothing changed. */
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    rate: 2000\n    burst: 100\n"
		 "  %s:\n    rate: 2000\n    burst: 100\n",
		 t.b.rx_if, t.ns.rx_if);
	if (!write_yaml(path, sizeof(path), text))
		goto out;
	ASSERT_EQ(cli(&t, NULL, &err, "apply %s", path), 1, "unsharing live is refused");
	ASSERT_CONTAINS(err, "detach", "and says how");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id1, "nothing changed");
	/* The reverse: a limiter of its own made to share, refused too. */
	snprintf(args, sizeof(args), "detach %s", t.b.rx_if);
	rl_ns_cli_ok(&t.ns, "detach the second", args);
	snprintf(args, sizeof(args), "attach %s " POLICY, t.b.rx_if);
	if (!rl_ns_cli_ok(&t.ns, "attach the second alone", args))
		goto out;
	id0 = prog_id(&t, t.b.rx_if);
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    share: %s\n  %s:\n    rate: 2000\n    burst: 100\n",
		 t.b.rx_if, t.ns.rx_if, t.ns.rx_if);
	if (!write_yaml(path, sizeof(path), text))
		goto out;
	free(err);
	err = NULL;
	ASSERT_EQ(cli(&t, NULL, &err, "apply %s", path), 1, "sharing live is refused");
	ASSERT_CONTAINS(err, "share: the limiter attached is not that of", "and says why");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), id0, "the second keeps its own");
	/* --prune with only the first in the file detaches the second alone. */
	snprintf(text, sizeof(text), "interfaces:\n  %s:\n    rate: 2000\n    burst: 100\n",
		 t.ns.rx_if);
	if (!write_yaml(path, sizeof(path), text) ||
	    !ASSERT_EQ(cli(&t, NULL, NULL, "apply --prune %s", path), 0, "apply --prune"))
		goto out;
	ASSERT_EQ(prog_id(&t, t.b.rx_if), 0, "the second is detached");
	ASSERT_EQ(prog_id(&t, t.ns.rx_if), id1, "the first keeps its program");
	ASSERT_EQ(cli(&t, NULL, NULL, "apply --detach %s", path), 0, "apply --detach");
out:
	unlink(path);
	free(out);
	free(err);
	two_destroy(&t);
}

/*
 * What a detach killed between the program's detach and the unpin leaves: a
 * member's pins with no program on it, while the other member runs the
 * limiter. They are stale, not another interface's: status says it is not
 * attached, and attach --share and detach take them over.
 */
TEST_FLAGS(share_stale_member_pins, RL_TEST_ROOT)
{
	char *out = NULL, *err = NULL, pin[PATH_MAX];
	struct two t;

	if (!two_create(&t) || !attach_both(&t, POLICY))
		goto out;
	if (!ASSERT_OK(rl_ns_rx_sh(&t.ns, NULL, "ip link set dev %s xdp off", t.b.rx_if),
		       "take the program off the second alone"))
		goto out;
	ASSERT_OK(rl_ns_pin_dir(t.ns.rx, t.b.rx_if, pin, sizeof(pin)), "pin directory");
	ASSERT_TRUE(access(pin, F_OK) == 0, "its pins are left");
	ASSERT_EQ(cli(&t, NULL, &err, "status %s", t.b.rx_if), 1, "status on the second");
	ASSERT_CONTAINS(err, "not attached", "says it is not attached");
	free(err);
	err = NULL;
	ASSERT_EQ(cli(&t, &out, NULL, "status %s", t.ns.rx_if), 0, "the first is fine");
	ASSERT_TRUE(out && !strstr(out, "shares"), "and shares with nobody");
	if (!ASSERT_EQ(cli(&t, NULL, &err, "attach %s --share %s", t.b.rx_if, t.ns.rx_if), 0,
		       "attach --share over the stale pins"))
		fprintf(stderr, "    %s", err ? err : "");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), prog_id(&t, t.ns.rx_if), "shared again");
	rl_ns_rx_sh(&t.ns, NULL, "ip link set dev %s xdp off", t.b.rx_if);
	ASSERT_EQ(cli(&t, NULL, NULL, "detach %s", t.b.rx_if), 0, "detach removes stale pins");
	ASSERT_TRUE(access(pin, F_OK) != 0, "they are gone");
	ASSERT_EQ(cli(&t, NULL, NULL, "status %s", t.ns.rx_if), 0, "the first still runs");
out:
	free(out);
	free(err);
	two_destroy(&t);
}

/* share: in a file, refused by the loader: each with its line and the reason. */
static const struct {
	const char *text;
	int line;
	const char *msg;
} bad_shares[] = {
	{ "interfaces:\n  eth0:\n    share: eth0\n", 3,
	  "eth0: share: 'eth0': an interface cannot" },
	{ "interfaces:\n  eth1:\n    share: eth0\n", 3,
	  "eth1: share: 'eth0': not an interface of this file" },
	{ "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    share: eth0\n  eth2:\n"
	  "    share: eth1\n",
	  7, "eth2: share: 'eth1': shares a limiter itself" },
	{ "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    share: eth0\n    rate: 5\n", 6,
	  "eth1: rate: the policy, options and rules of a shared limiter" },
	{ "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    share: eth0\n    max-sources: 5\n", 6,
	  "eth1: max-sources: the policy" },
	{ "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    share: eth0\n    rules:\n"
	  "      - name: a\n        deny: true\n",
	  6, "eth1: rules: the policy" },
	{ "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    share: a/b\n", 5,
	  "eth1: share: 'a/b' is not an interface name" },
};

TEST(share_apply_load)
{
	char path[64], want[256], what[64], err[RL_ERRLEN];
	struct rl_apply_file f;

	for (size_t i = 0; i < sizeof(bad_shares) / sizeof(bad_shares[0]); i++) {
		snprintf(what, sizeof(what), "bad share %zu", i);
		if (!write_yaml(path, sizeof(path), bad_shares[i].text))
			return;
		err[0] = '\0';
		ASSERT_EQ(rl_apply_load(&f, path, err, sizeof(err)), -EINVAL, what);
		snprintf(want, sizeof(want), "%s:%d: %s", path, bad_shares[i].line,
			 bad_shares[i].msg);
		if (!ASSERT_TRUE(!strncmp(err, want, strlen(want)), what))
			printf("    got:  %s\n    want: %s...\n", err, want);
		unlink(path);
	}
	/* A good one: the share and the mode kept, no policy built for it. */
	if (!write_yaml(path, sizeof(path),
			"interfaces:\n  eth1:\n    share: eth0\n    mode: skb\n  eth0:\n"
			"    rate: 10\n"))
		return;
	if (ASSERT_OK(rl_apply_load(&f, path, err, sizeof(err)), "load a file with share:")) {
		ASSERT_EQ(f.n, 2, "two interfaces");
		ASSERT_STREQ(f.ifs[0].share, "eth0", "eth1 shares eth0's");
		ASSERT_EQ(f.ifs[0].share_line, 3, "the line of share:");
		ASSERT_EQ(f.ifs[0].mode, RL_MODE_SKB, "its mode");
		ASSERT_STREQ(f.ifs[1].share, "", "eth0 has its own");
		rl_apply_free(&f);
	}
	unlink(path);
}

/* xdp-ratelimit @args in the receiving namespace, SIGKILLed after @kill_after_us. */
static void run_killed(struct two *t, char *const args[], long kill_after_us)
{
	char path[PATH_MAX], bin[PATH_MAX];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "/run/netns/%s", t->ns.rx);
	snprintf(bin, sizeof(bin), "%s/xdp-ratelimit", rl_build_dir);
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), null = open("/dev/null", O_WRONLY);

		if (fd < 0 || null < 0 || setns(fd, CLONE_NEWNET))
			_exit(127);
		dup2(null, 1);
		dup2(null, 2);
		execv(bin, args);
		_exit(127);
	}
	usleep((useconds_t)kill_after_us);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/*
 * After a kill: the first member runs the limiter; the second runs it (the
 * same program) iff status says it is attached. Returns whether the second
 * runs it.
 */
static bool consistent(struct two *t, const char *after)
{
	unsigned int a = prog_id(t, t->ns.rx_if), b = prog_id(t, t->b.rx_if);
	int rc_a = cli(t, NULL, NULL, "status %s", t->ns.rx_if);
	int rc_b = cli(t, NULL, NULL, "status %s", t->b.rx_if);

	if (!ASSERT_TRUE(a != 0 && rc_a == 0, after) || !ASSERT_EQ(b != 0, rc_b == 0, after))
		printf("    after %s: programs %u and %u, status %d and %d\n", after, a, b, rc_a,
		       rc_b);
	return b != 0;
}

TEST_FLAGS(share_crash_sigkill, RL_TEST_ROOT)
{
	unsigned long long st = rl_test_seed() ^ 0x5a5e;
	char staging[PATH_MAX], args[128];
	int cut_attach = 0, cut_set = 0, cut_detach = 0;
	struct two t;

	if (!two_create(&t) || !attach_first(&t))
		goto out;
	for (int round = 0; round < 12; round++) {
		char rate[16];
		char *attach[] = {
			"xdp-ratelimit", "attach", t.b.rx_if, "--share", t.ns.rx_if, NULL
		};
		char *set[] = { "xdp-ratelimit", "set", t.b.rx_if, "--rate", rate, NULL };
		char *detach[] = { "xdp-ratelimit", "detach", t.b.rx_if, NULL };

		run_killed(&t, attach, (long)rl_rand_below(&st, 20000));
		if (!consistent(&t, "a killed attach --share")) {
			cut_attach++;
			snprintf(args, sizeof(args), "attach %s --share %s", t.b.rx_if, t.ns.rx_if);
			if (!rl_ns_cli_ok(&t.ns, "attach --share again", args))
				goto out;
		}
		snprintf(rate, sizeof(rate), "%d", 200 + 100 * round);
		run_killed(&t, set, (long)rl_rand_below(&st, 250000));
		if (!ASSERT_TRUE(consistent(&t, "a killed set"), "the second still runs it"))
			goto out;
		if (cli(&t, NULL, NULL, "status %s | grep -q ' %s/s'", t.ns.rx_if, rate))
			cut_set++;
		snprintf(args, sizeof(args), "set %s --rate %s", t.b.rx_if, rate);
		if (!rl_ns_cli_ok(&t.ns, "set again", args))
			goto out;
		ASSERT_EQ(prog_id(&t, t.b.rx_if), prog_id(&t, t.ns.rx_if),
			  "after set again, one program on both");
		run_killed(&t, detach, (long)rl_rand_below(&st, 20000));
		if (consistent(&t, "a killed detach")) {
			cut_detach++;
			snprintf(args, sizeof(args), "detach %s", t.b.rx_if);
			if (!rl_ns_cli_ok(&t.ns, "detach again", args))
				goto out;
		}
		ASSERT_EQ(prog_id(&t, t.b.rx_if), 0, "detached");
	}
	printf("    killed before the end: %d attach --share, %d set, %d detach of 12 each\n",
	       cut_attach, cut_set, cut_detach);
	/* What a killed attach may have left in staging, the last detach removed. */
	snprintf(staging, sizeof(staging), RL_STAGING_ROOT "%s", strrchr(t.nsdir, '/'));
	ASSERT_TRUE(access(staging, F_OK) != 0, "nothing left in staging");
out:
	two_destroy(&t);
}

/* set killed between the two members' swaps (XDP_RATELIMIT_FAULT=kill-between-members). */
static bool set_killed(struct two *t, const char *rate)
{
	int rc = rl_sh(NULL,
		       "XDP_RATELIMIT_FAULT=kill-between-members nsenter --net=/run/netns/%s "
		       "%s/xdp-ratelimit set %s --rate %s 2>/dev/null",
		       t->ns.rx, rl_build_dir, t->ns.rx_if, rate);
	unsigned int a = prog_id(t, t->ns.rx_if), b = prog_id(t, t->b.rx_if);

	return ASSERT_EQ(rc, 128 + SIGKILL, "set killed") &&
	       ASSERT_TRUE(a && b && a != b, "the members run different programs");
}

TEST_FLAGS(share_converge, RL_TEST_ROOT)
{
	char path[64] = "", text[256], *out = NULL, *err = NULL;
	struct two t;

	if (!two_create(&t) || !attach_both(&t, POLICY) || !set_killed(&t, "400"))
		goto out;
	/* The live copy is still 100/s: set to it changes no policy, but the programs. */
	ASSERT_EQ(cli(&t, &out, &err, "set %s --rate 100", t.b.rx_if), 0, "set to the live policy");
	ASSERT_CONTAINS(out, "unchanged", "the policy is unchanged");
	ASSERT_CONTAINS(err, "run one again", "it says what it did");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), prog_id(&t, t.ns.rx_if), "one program again");
	free(out);
	free(err);
	out = err = NULL;
	/* The same through apply: the file's policy is the live one. */
	if (!set_killed(&t, "500"))
		goto out;
	snprintf(text, sizeof(text),
		 "interfaces:\n  %s:\n    share: %s\n  %s:\n    rate: 100\n    burst: 100\n",
		 t.b.rx_if, t.ns.rx_if, t.ns.rx_if);
	if (!write_yaml(path, sizeof(path), text))
		goto out;
	ASSERT_EQ(cli(&t, &out, &err, "apply %s", path), 0, "apply");
	ASSERT_CONTAINS(out, "unchanged", "nothing to change in the policy");
	ASSERT_CONTAINS(err, "run one again", "it says what it did");
	ASSERT_EQ(prog_id(&t, t.b.rx_if), prog_id(&t, t.ns.rx_if), "one program after apply");
	free(out);
	out = NULL;
	ASSERT_EQ(cli(&t, &out, NULL, "status %s", t.b.rx_if), 0, "status");
	ASSERT_CONTAINS(out, "token-bucket 100/s", "the live policy");
out:
	if (path[0])
		unlink(path);
	free(out);
	free(err);
	two_destroy(&t);
}

/* How many lines of @text start with @prefix. */
static int lines_with(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += !strncmp(l, prefix, strlen(prefix));
	return n;
}

/*
 * The exporter reports a shared limiter's counters once, under the first of
 * its interfaces by name, and names the limiter of the others: summing over
 * iface counts each packet once.
 */
TEST_FLAGS(share_exporter_counts_once, RL_TEST_ROOT)
{
	char *out = NULL, want[256];
	const char *first, *second;
	struct two t;
	size_t len;

	if (!two_create(&t) || !attach_both(&t, "--rate 100 --burst 100"))
		goto out;
	first = strcmp(t.ns.rx_if, t.b.rx_if) < 0 ? t.ns.rx_if : t.b.rx_if;
	second = first == t.ns.rx_if ? t.b.rx_if : t.ns.rx_if;
	if (!ASSERT_OK(rl_metrics_render(&out, &len), "render the metrics"))
		goto out;
	snprintf(want, sizeof(want), "xdp_ratelimit_packets_total{iface=\"%s\",", first);
	ASSERT_EQ(lines_with(out, want), 2, "the counters under the first name (passed, dropped)");
	snprintf(want, sizeof(want), "xdp_ratelimit_packets_total{iface=\"%s\",", second);
	ASSERT_EQ(lines_with(out, want), 0, "not again under the second");
	snprintf(want, sizeof(want), "xdp_ratelimit_shares_limiter_info{iface=\"%s\",", second);
	ASSERT_EQ(lines_with(out, want), 1, "the second shares a limiter");
	snprintf(want, sizeof(want), "limiter=\"%s\"} 1\n", first);
	ASSERT_CONTAINS(out, want, "the first's");
out:
	free(out);
	two_destroy(&t);
}
