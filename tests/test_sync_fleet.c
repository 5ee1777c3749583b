// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet sync of what the default policy's counting did not cover before
 * (issue #27): limit rules and dry-run. FLEET limiters, each the XDP program
 * under BPF_PROG_TEST_RUN on its own maps and test clock, each with its own
 * agent (the agent's own round, rl_sync_kern_round(): drain, the real script on a
 * real redis-server, charge), on simulated time: every 100 ms interval each
 * node is offered its packets, then every agent runs a round. One source,
 * offered at 3x its limit spread over the nodes: first without the agents,
 * then another source with them.
 *	sync_fleet_rule		the source under a limit rule (the default policy far
 *				above it): the fleet passes about r t + b under the
 *				rule, where it passes about 3x without the agents
 *	sync_fleet_dry_run	the default policy and a limit rule in dry-run: nothing
 *				is dropped, and the would-drops of each are the
 *				fleet's, offered - (r t + b), where each node alone
 *				would-drops only what it is offered above its own
 *				limit
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "frames.h"
#include "harness.h"
#include "redis_srv.h"
#include "rulemaps.h"
#include "sync_agent.h"
#include "sync_kern.h"
#include "test.h"

#define FLEET	     3
#define MS	     1000000ULL
#define T0	     (1000 * 1000 * MS)
#define INTERVAL     (100 * MS)
#define INTERVALS    30 /* 3 s */
#define RATE	     1000
#define BURST	     100
#define FLEET_MAXSRC 4096

struct node {
	struct rl_prog p;
	bool loaded;
	struct rl_sync_kern *k;
	struct rl_sync_agent ag;
	bool agent;
	struct rl_sync_recent rc;
	char policy[RL_SYNC_POLICY_MAX];
};

struct fleet {
	struct node n[FLEET];
	struct redis_srv s;
	bool redis;
};

static void fleet_stop(struct fleet *f)
{
	for (int i = 0; i < FLEET; i++) {
		struct node *n = &f->n[i];

		if (n->agent) {
			rl_sync_recent_free(&n->rc);
			rl_sync_agent_fini(&n->ag);
		}
		if (n->k)
			rl_sync_kern_close(n->k, false);
		if (n->loaded)
			rl_prog_close(&n->p);
		n->agent = n->loaded = false;
		n->k = NULL;
	}
	if (f->redis)
		redis_srv_stop(&f->s);
	f->redis = false;
}

/*
 * FLEET limiters of the default policy @def (sync counting on) with the
 * rules @rules (NULL: none), and a redis-server.
 */
static bool fleet_start(struct fleet *f, const char *const *def, const char *const *rules)
{
	char err[RL_ERRLEN] = "";

	memset(f, 0, sizeof(*f));
	if (!redis_srv_available()) {
		rl_test_skip("no redis-server (make deps installs it)");
		return false;
	}
	if (!ASSERT_TRUE(redis_srv_start(&f->s, false), "redis-server"))
		return false;
	f->redis = true;
	for (int i = 0; i < FLEET; i++) {
		struct node *n = &f->n[i];
		struct rl_config cfg;

		if (!rl_build_config(&cfg, def, NULL))
			return false;
		cfg.sync_count = 1;
		if (!rl_prog_load(&n->p, true, FLEET_MAXSRC))
			return false;
		n->loaded = true;
		if (rules ? !rl_prog_rules(&n->p, &cfg, rules) : !rl_prog_configure(&n->p, 0, &cfg))
			return false;
		if (!ASSERT_OK(rl_sync_kern_from_pins(&n->p.maps, n->p.clock_fd, &n->k, err,
						      sizeof(err)),
			       err))
			return false;
	}
	return true;
}

/*
 * An agent on each node, in group @group. As rl_sync_run() does, each drops
 * a first drain: what was counted before it started.
 */
static bool agents_start(struct fleet *f, const char *group)
{
	static const char *const names[FLEET] = { "n0", "n1", "n2" };
	char err[RL_ERRLEN] = "";

	for (int i = 0; i < FLEET; i++) {
		struct node *n = &f->n[i];
		struct rl_sync_cfg sc = { .group = group,
					  .node = names[i],
					  .interval_ns = INTERVAL,
					  .fallback = RL_SYNC_FB_LOCAL };
		struct rl_sync_recent_cfg rcfg;
		struct rl_sync_src *v = NULL;
		size_t nv;

		if (!ASSERT_OK(rl_sync_kern_policy(n->k, n->policy, sizeof(n->policy)), "policy") ||
		    !ASSERT_OK(rl_redis_url_parse(f->s.url, &sc.url, err, sizeof(err)), err) ||
		    !ASSERT_OK(rl_sync_agent_init(&n->ag, &sc, n->policy, err, sizeof(err)), err))
			return false;
		rl_sync_agent_recent_cfg(&n->ag, &rcfg);
		rl_sync_recent_init(&n->rc, &rcfg);
		n->agent = true;
		if (!ASSERT_OK(rl_sync_drain(n->k, &v, &nv), "first drain"))
			return false;
		free(v);
	}
	return true;
}

/*
 * @intervals of 100 ms from @t0: node i is offered pps[i] / 10 frames of each
 * of @nf frames @fr in each (at once, in its middle), then, with agents,
 * every agent runs a round. Returns false on a failed round.
 */
static bool fleet_run(struct fleet *f, const struct frame *fr, int nf, const unsigned int *pps,
		      __u64 t0, int intervals)
{
	char err[RL_ERRLEN] = "";

	for (int t = 0; t < intervals; t++) {
		__u64 now = t0 + (__u64)t * INTERVAL + INTERVAL / 2;

		for (int i = 0; i < FLEET; i++)
			for (int j = 0; j < nf && pps[i]; j++)
				if (rl_prog_run(&f->n[i].p, now, fr[j].data, fr[j].len,
						pps[i] / 10) < 0)
					return ASSERT_TRUE(false, "test run");
		for (int i = 0; i < FLEET; i++) {
			struct node *n = &f->n[i];

			/* The charge program reads the node's clock: the interval's end. */
			if (!n->agent)
				continue;
			now = t0 + (__u64)(t + 1) * INTERVAL;
			if (!ASSERT_OK(bpf_map_update_elem(n->p.clock_fd, &(__u32){ 0 }, &now,
							   BPF_ANY),
				       "clock") ||
			    !ASSERT_OK(rl_sync_kern_round(n->k, &n->ag, &n->rc, err, sizeof(err)),
				       err))
				return false;
		}
	}
	return true;
}

/* The frame of source @src: UDP to port @dport (54: the rules' port). */
static void source_frame(struct frame *f, const char *src, __u16 dport)
{
	fr_init(f);
	fr_eth(f, 0x0800);
	fr_ipv4_l4(f, src, RL_PROTO_UDP, dport, 0, 0);
	fr_pad(f, 64);
}

/* Passed (or with @would, would-drops) under rule slot 0 (the first rule) on every node. */
static __u64 rule_count(struct fleet *f, bool would)
{
	struct rl_rule_counters rc;
	__u64 n = 0;

	for (int i = 0; i < FLEET; i++)
		if (!rl_rules_counters(&f->n[i].p.maps, 0, &rc))
			n += would ? rc.would_drop : rc.passed;
	return n;
}

static __u64 rule_passed(struct fleet *f)
{
	return rule_count(f, false);
}

/* 3x the limit: evenly, and 70/20/10 over the nodes. */
static const unsigned int even[FLEET] = { 1000, 1000, 1000 };
static const unsigned int split[FLEET] = { 2100, 600, 300 };

/* The agents' run: later than the first, its sources' buckets full whatever the first did. */
#define T1 (T0 + 100 * 1000 * MS)

TEST_FLAGS(sync_fleet_rule, RL_TEST_ROOT)
{
	static const char *const def[] = { "--rate", "1000000", "--burst", "1000000", NULL };
	static const char *const rules[] = { "dns --proto udp --dport 54 --rate 1000 --burst 100",
					     NULL };
	const __u64 want = RATE * INTERVALS / 10 + BURST;
	struct frame fa, fb;
	struct fleet f;
	__u64 alone, fleet;
	char what[160];

	source_frame(&fa, "198.18.0.1", 54);
	source_frame(&fb, "198.18.0.2", 54);
	/* Without agents each node passes its own limit. */
	if (!fleet_start(&f, def, rules) || !fleet_run(&f, &fa, 1, even, T0, INTERVALS))
		goto out;
	alone = rule_passed(&f);
	if (!agents_start(&f, "rule") || !fleet_run(&f, &fb, 1, even, T1, INTERVALS))
		goto out;
	fleet = rule_passed(&f) - alone;
	snprintf(what, sizeof(what),
		 "under the rule, r t + b = %llu: %llu passed without agents (%.2fx), %llu with "
		 "(%.3fx)",
		 (unsigned long long)want, (unsigned long long)alone, (double)alone / want,
		 (unsigned long long)fleet, (double)fleet / want);
	printf("    %s\n", what);
	ASSERT_TRUE(alone * 10 > want * 25, "without agents, each node its own limit");
	ASSERT_LE(fleet, want + want / 10, what);
	ASSERT_LE(want - want / 20, fleet, what);
	for (int i = 0; i < FLEET; i++)
		ASSERT_TRUE(f.n[i].ag.st.syncs_total >= INTERVALS, "every agent synced");
out:
	fleet_stop(&f);
}

/* Summed over the nodes: passed and would-drop, the default rule's and the rule's. */
static void dry_counts(struct fleet *f, __u64 *passed, __u64 *would, __u64 *rule_would)
{
	struct rl_counters c;

	*passed = *would = 0;
	for (int i = 0; i < FLEET; i++)
		if (rl_prog_counters(&f->n[i].p, &c)) {
			*passed += c.passed;
			*would += c.would_drop;
		}
	/* The interface's would-drops are the default rule's; a rule's are its own. */
	*rule_would = rule_count(f, true);
}

/* @what's would-drops of @offered with agents: the fleet's would-passes about r t + b. */
static void dry_check(const char *what, __u64 offered, __u64 alone, __u64 would)
{
	const __u64 want = RATE * INTERVALS / 10 + BURST;
	char buf[240];

	snprintf(buf, sizeof(buf),
		 "%s: offered %llu, r t + b = %llu: would-drops %llu without agents, %llu with; "
		 "would-pass with agents %llu (%.3fx r t + b)",
		 what, (unsigned long long)offered, (unsigned long long)want,
		 (unsigned long long)alone, (unsigned long long)would,
		 (unsigned long long)(offered - would), (double)(offered - would) / want);
	printf("    %s\n", buf);
	ASSERT_TRUE((offered - alone) * 10 > want * 18, "without agents, each node its own limit");
	ASSERT_LE(offered - would, want + want / 10, buf);
	ASSERT_LE(want - want / 20, offered - would, buf);
}

/*
 * Dry-run in the default policy (a source to port 53) and in a limit rule
 * (the same source to port 54), each 1000/s burst 100, over three nodes.
 */
TEST_FLAGS(sync_fleet_dry_run, RL_TEST_ROOT)
{
	static const char *const def[] = { "--rate",   "1000",	  "--burst", "100",
					   "--action", "dry-run", NULL };
	static const char *const rules[] = {
		"dns --proto udp --dport 54 --rate 1000 --burst 100 --action dry-run", NULL
	};
	__u64 offered = 0, passed, would, rwould, p0, alone, ralone;
	struct frame fa[2], fb[2];
	struct fleet f;

	source_frame(&fa[0], "198.18.0.1", 53);
	source_frame(&fa[1], "198.18.0.1", 54);
	source_frame(&fb[0], "198.18.0.2", 53);
	source_frame(&fb[1], "198.18.0.2", 54);
	for (int i = 0; i < FLEET; i++)
		offered += (__u64)split[i] / 10 * INTERVALS;
	if (!fleet_start(&f, def, rules) || !fleet_run(&f, fa, 2, split, T0, INTERVALS))
		goto out;
	dry_counts(&f, &p0, &alone, &ralone);
	ASSERT_EQ(p0, 2 * offered, "dry-run without agents: everything passed");
	if (!agents_start(&f, "dry") || !fleet_run(&f, fb, 2, split, T1, INTERVALS))
		goto out;
	dry_counts(&f, &passed, &would, &rwould);
	ASSERT_EQ(passed - p0, 2 * offered, "dry-run with agents: everything passed");
	dry_check("the default policy", offered, alone, would - alone);
	dry_check("a limit rule", offered, ralone, rwould - ralone);
out:
	fleet_stop(&f);
}
