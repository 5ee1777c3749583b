// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet sync agent (user/lib/sync_agent.h, user/lib/sync_redis.h) against a real
 * redis-server started by each test (tests/lib/redis_srv.h).
 *
 * Without the kernel: synthetic sources through the agent's step, the real
 * script and the real server.
 *	sync_url		redis:// and unix:// URLs: accepted, and refused with the reason
 *	sync_round_trip		two nodes: each gets what the other passed since it last asked,
 *				one command per round trip, a source seen once gets nothing
 *	sync_stale_expiry	a node idle on a source for 3 intervals inherits nothing;
 *				every key expires after the TTL
 *	sync_policy		another live node's policy: the start and a running node go on
 *				in fallback (policy-mismatch), naming the differing line,
 *				and sync again once the policies agree
 *	sync_fallback_kill	server killed: fallback at the next round trip (local: no
 *				charge, share: units x other nodes), said once, counted;
 *				restarted: syncing again within two intervals
 *	sync_fallback_slow	DEBUG SLEEP: fallback within an interval, recovery after
 *	sync_fallback_auth	requirepass set under a running agent, then lifted; the script
 *				flushed (NOSCRIPT) is reloaded in the same round trip
 *	sync_shared_only	1000 sources on one node: claimed in the first round, then
 *				not sent (bytes counted); another node reports one: the
 *				inbox, exact charges both ways; alone again for a TTL, it
 *				is claimed again
 *	sync_recent		the table of what to send: new sources claimed (at most so many
 *				a round), claimed ones not sent until due, shared ones every
 *				interval and remembered with 0 units, a claimed one shared by
 *				the inbox sends its held units, lost buckets claimed again
 *	sync_lock		a second agent for one interface is refused, naming the pid;
 *				released, the lock file is removed
 *	sync_cli_bad_input	the command: malformed URL, unreachable host, a server that
 *				never answers, interval 0 and 2m, wrong password
 *	sync_starts_without_redis  started while Redis is down: runs in fallback (stats
 *				says so), connects and syncs once redis-server comes up
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "harness.h"
#include "metrics.h"
#include "netns.h"
#include "rl_algo.h"
#include "redis_srv.h"
#include "sync_agent.h"
#include "test.h"

#define POLICY	"algo=token-bucket\nrate=1000/1\nburst=100\n"
#define POLICY2 "algo=token-bucket\nrate=2000/1\nburst=100\n"
/* A rate that lets a single charge of 2^52 and more through (rl_sync_charge_max()). */
#define POLICY_HUGE "algo=token-bucket\nbytes=1\nrate=100000000000000000/1\nburst=100\n"
#define MS	    1000000ULL

static void cfg_for(struct rl_sync_cfg *cfg, const struct redis_srv *s, const char *group,
		    const char *node, __u64 interval_ns, enum rl_sync_fallback fb)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	rl_redis_url_parse(s->url, &cfg->url, err, sizeof(err));
	cfg->group = group;
	cfg->node = node;
	cfg->interval_ns = interval_ns;
	cfg->fallback = fb;
}

static void item(struct rl_sync_item *it, const char *src, __u64 units)
{
	memset(it, 0, sizeof(*it));
	snprintf(it->src, sizeof(it->src), "%s", src);
	it->units = units;
	it->remote = ~0ULL;
}

TEST(sync_url)
{
	static const struct {
		const char *url;
		const char *host, *path, *password;
		unsigned int port, db;
	} ok[] = {
		{ "redis://127.0.0.1:6379", "127.0.0.1", "", "", 6379, 0 },
		{ "redis://redis.example:7000/3", "redis.example", "", "", 7000, 3 },
		{ "redis://:s3cr@t@10.0.0.1:1/15", "10.0.0.1", "", "s3cr@t", 1, 15 },
		{ "redis://[::1]:6379", "::1", "", "", 6379, 0 },
		{ "redis://[2001:db8::5]:65535/0", "2001:db8::5", "", "", 65535, 0 },
		{ "unix:///run/redis/redis.sock", "", "/run/redis/redis.sock", "", 0, 0 },
		{ "unix://:pw@/tmp/r.sock", "", "/tmp/r.sock", "pw", 0, 0 },
	};
	static const struct {
		const char *url, *why;
	} bad[] = {
		{ "", "is not a Redis URL" },
		{ "http://127.0.0.1:6379", "is not a Redis URL" },
		{ "rediss://h:1", "is not a Redis URL" },
		{ "redis://", "no host" },
		{ "redis://h", "no :PORT" },
		{ "redis://:6379", "no host" },
		{ "redis://h:", "no valid PORT" },
		{ "redis://h:0", "no valid PORT" },
		{ "redis://h:65536", "no valid PORT" },
		{ "redis://h:12x", "no valid PORT" },
		{ "redis://h:-1", "no valid PORT" },
		{ "redis://h:1/", "no valid DB" },
		{ "redis://h:1/x", "no valid DB" },
		{ "redis://h:1/1/2", "no valid DB" },
		{ "redis://h:1?db=2", "no valid PORT" },
		{ "redis://user:pw@h:1", "user name" },
		{ "redis://:@h:1", "empty password" },
		{ "redis://h_x:1", "invalid host" },
		{ "redis://[::1:1", "unterminated" },
		{ "redis://[]:1", "unterminated or empty" },
		{ "redis://[::g]:1", "invalid IPv6" },
		{ "redis://[::1]", "no :PORT" },
		{ "unix://", "absolute socket path" },
		{ "unix://tmp/r.sock", "absolute socket path" },
		{ "unix:///", "directory" },
		{ "unix:///tmp/", "directory" },
	};
	struct rl_redis_url u;
	char err[512];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (!ASSERT_OK(rl_redis_url_parse(ok[i].url, &u, err, sizeof(err)), ok[i].url))
			continue;
		ASSERT_STREQ(u.host, ok[i].host, ok[i].url);
		ASSERT_STREQ(u.path, ok[i].path, ok[i].url);
		ASSERT_STREQ(u.password, ok[i].password, ok[i].url);
		ASSERT_EQ(u.port, ok[i].port, ok[i].url);
		ASSERT_EQ(u.db, ok[i].db, ok[i].url);
		ASSERT_EQ(u.is_unix, ok[i].path[0] != '\0', ok[i].url);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ASSERT_EQ(rl_redis_url_parse(bad[i].url, &u, err, sizeof(err)), -EINVAL,
			  bad[i].url);
		ASSERT_CONTAINS(err, bad[i].why, bad[i].url);
	}
	/* Messages never show the password. */
	rl_redis_url_parse("redis://:hunter2@h:1/2", &u, err, sizeof(err));
	rl_redis_url_str(&u, err, sizeof(err));
	ASSERT_STREQ(err, "redis://h:1/2", "the URL as messages show it");
}

/* sentinel:// and cluster://: several servers, a master name, the same host rules. */
TEST(sync_url_sentinel_cluster)
{
	static const struct {
		const char *url, *why;
	} bad[] = {
		{ "sentinel://h:1", "no /MASTER" },
		{ "sentinel://h:1/", "no /MASTER" },
		{ "sentinel://h:1,/m", "no host" },
		{ "sentinel://h:1,h:1/m", "twice" },
		{ "sentinel://h:1/m y", "invalid master name" },
		{ "sentinel://h/m", "no :PORT" },
		{ "cluster://h:1/0", "no DB or master" },
		{ "cluster://h:1,h:0", "no valid PORT" },
		{ "cluster://", "no host" },
		{ "redis://h:1,h:2", "sentinel:// or cluster://" },
		{ "sentinel://u:p@h:1/m", "user name" },
	};
	struct rl_redis_url u;
	char err[512];

	if (!ASSERT_OK(rl_redis_url_parse(
			       "sentinel://:pw@[::1]:26379,127.0.0.1:26380,s.example:1/mymaster",
			       &u, err, sizeof(err)),
		       err))
		return;
	ASSERT_EQ(u.kind, RL_REDIS_SENTINEL, "kind");
	ASSERT_EQ(u.naddrs, 3, "three sentinels");
	ASSERT_STREQ(u.addrs[0].host, "::1", "an IPv6 sentinel");
	ASSERT_EQ(u.addrs[1].port, 26380, "the second's port");
	ASSERT_STREQ(u.addrs[2].host, "s.example", "a name");
	ASSERT_STREQ(u.master, "mymaster", "the master's name");
	ASSERT_STREQ(u.password, "pw", "the password");
	rl_redis_url_str(&u, err, sizeof(err));
	ASSERT_STREQ(err, "sentinel://[::1]:26379,127.0.0.1:26380,s.example:1/mymaster",
		     "no password in messages");
	if (!ASSERT_OK(rl_redis_url_parse("cluster://127.0.0.1:7000,127.0.0.1:7001", &u, err,
					  sizeof(err)),
		       err))
		return;
	ASSERT_EQ(u.kind, RL_REDIS_CLUSTER, "kind");
	ASSERT_EQ(u.naddrs, 2, "two nodes");
	rl_redis_url_str(&u, err, sizeof(err));
	ASSERT_STREQ(err, "cluster://127.0.0.1:7000,127.0.0.1:7001", "as messages show it");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ASSERT_EQ(rl_redis_url_parse(bad[i].url, &u, err, sizeof(err)), -EINVAL,
			  bad[i].url);
		ASSERT_CONTAINS(err, bad[i].why, bad[i].url);
	}
}

TEST(sync_round_trip)
{
	struct rl_sync_agent a = {}, b = {};
	struct rl_sync_cfg ca, cb;
	struct rl_sync_item it[3];
	struct redis_srv s;
	char err[512], *out = NULL;
	__u64 cmds, xchg;

	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_for(&ca, &s, "g1", "a", 50 * MS, RL_SYNC_FB_LOCAL);
	cfg_for(&cb, &s, "g1", "b", 50 * MS, RL_SYNC_FB_LOCAL);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY_HUGE, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sync_agent_init(&b, &cb, POLICY_HUGE, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(b.st.nodes, 2, "b sees both nodes");
	ASSERT_EQ(b.st.state, RL_SYNC_CONNECTED, "connected");

	/* a first: nobody else passed anything. */
	item(&it[0], "198.18.0.1/32", 10);
	item(&it[1], "198.18.0.2/32", 5);
	cmds = a.commands_total;
	xchg = a.exchanges_total;
	ASSERT_EQ(rl_sync_agent_step(&a, it, 2, err, sizeof(err)), 0, "a synced");
	ASSERT_EQ(a.exchanges_total - xchg, 1, "one exchange per round trip");
	ASSERT_EQ(a.commands_total - cmds, 2, "the group's script and the bucket's");
	ASSERT_EQ(it[0].remote, 0, "a: nothing from b yet");
	ASSERT_EQ(it[1].remote, 0, "a: nothing from b yet");
	ASSERT_TRUE(it[0].local && it[1].local, "a alone has them: claimed");
	/* b's first round trip on .1: it had never asked, so a's past is not its debt. */
	item(&it[0], "198.18.0.1/32", 7);
	item(&it[1], "198.18.0.3/32", 1000);
	ASSERT_EQ(rl_sync_agent_step(&b, it, 2, err, sizeof(err)), 0, "b synced");
	ASSERT_EQ(it[0].remote, 0, "b: a's units before b first asked");
	ASSERT_TRUE(!it[0].local, "b: .1 is a's too: shared");
	ASSERT_TRUE(it[1].local, "b: .3 b's alone");
	ASSERT_EQ(b.st.sources_active, 2, "b: sources active");
	ASSERT_EQ(b.st.sources_shared, 0, "b: none shared yet");
	/* a again: b's 7 on .1; .2 only here; a 64-bit count survives the script. */
	item(&it[0], "198.18.0.1/32", 3);
	item(&it[1], "198.18.0.2/32", 1);
	item(&it[2], "2001:db8::/64", 1ULL << 52);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 3, err, sizeof(err)), 0, "a synced");
	ASSERT_EQ(it[0].remote, 7, "a gets b's units");
	ASSERT_EQ(it[1].remote, 0, "a source only a passed");
	ASSERT_EQ(it[2].remote, 0, "first time for the IPv6 source");
	ASSERT_EQ(a.st.sources_shared, 1, "a: one shared");
	ASSERT_EQ(a.st.charged_units_total, 7, "a: charged");
	/* b again: a's 3 since b last asked (not the 10 before). */
	item(&it[0], "198.18.0.1/32", 1);
	item(&it[1], "2001:db8::/64", (1ULL << 52) + 3);
	ASSERT_EQ(rl_sync_agent_step(&b, it, 2, err, sizeof(err)), 0, "b synced");
	ASSERT_EQ(it[0].remote, 3, "b gets a's units since it last asked");
	ASSERT_EQ(it[1].remote, 0, "first time for b");
	/* a again on the IPv6 source: b's count, exact above 2^52 (Lua's %.14g would round). */
	item(&it[0], "2001:db8::/64", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a synced");
	ASSERT_EQ(it[0].remote, (1ULL << 52) + 3, "a gets b's units, exactly");
	/* An empty round trip is one exchange too (the inbox is read), and keeps the node live. */
	xchg = a.exchanges_total;
	ASSERT_EQ(rl_sync_agent_step(&a, it, 0, err, sizeof(err)), 0, "empty round");
	ASSERT_EQ(a.exchanges_total - xchg, 1, "one exchange");
	ASSERT_EQ(a.st.nodes, 2, "two nodes");
	ASSERT_EQ(a.st.syncs_total, 4, "a: round trips");
	ASSERT_TRUE(a.st.redis_tx_bytes_total > 0 && a.st.redis_rx_bytes_total > 0, "bytes");
	/*
	 * The keys, under the bucket's hash tag: the total in the epoch's hash,
	 * since the source was shared (a's first 10 were a claim, sent nowhere).
	 */
	ASSERT_OK(rl_sh(&out,
			"for k in $(redis-cli -s '%s' --scan --pattern 'rl:{g1:0}:d:*'); do "
			"redis-cli -s '%s' HGET \"$k\" 198.18.0.1/32; done | grep .",
			s.sock, s.sock),
		  "HGET");
	ASSERT_STREQ(out, "11\n", "the total of both nodes since it was shared");
	free(out);
	out = NULL;
	ASSERT_OK(rl_sh(&out,
			"for k in $(redis-cli -s '%s' --scan --pattern 'rl:{g1:0}:o:*'); do "
			"redis-cli -s '%s' HGET \"$k\" 198.18.0.2/32; done | grep .",
			s.sock, s.sock),
		  "HGET");
	ASSERT_STREQ(out, "a\n", "the claim of a source only a has");
	free(out);
	out = NULL;
	ASSERT_OK(redis_srv_cli(&s, &out, "HGET 'rl:{g1}:policy' a"), "HGET");
	ASSERT_CONTAINS(out, "rate=100000000000000000/1", "the policy is stored per node");
out:
	free(out);
	rl_sync_agent_fini(&a);
	rl_sync_agent_fini(&b);
	redis_srv_stop(&s);
}

TEST(sync_stale_expiry)
{
	struct rl_sync_agent a = {}, b = {};
	struct rl_sync_cfg ca, cb;
	struct rl_sync_item it[1];
	struct redis_srv s;
	char err[512], *out = NULL;

	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_for(&ca, &s, "g2", "a", 20 * MS, RL_SYNC_FB_LOCAL);
	cfg_for(&cb, &s, "g2", "b", 20 * MS, RL_SYNC_FB_LOCAL);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sync_agent_init(&b, &cb, POLICY, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(a.stale_ms, 1000, "stale after 3 intervals, at least 1 s");
	ASSERT_EQ(a.ttl_ms, 2000, "TTL at least 2 s");
	item(&it[0], "198.18.0.9/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a");
	ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b");
	/* b alone for 0.5 s: a, late (a slow drain), still gets b's units. */
	for (int i = 0; i < 5; i++) {
		usleep(100000);
		item(&it[0], "198.18.0.9/32", 10);
		ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b");
	}
	item(&it[0], "198.18.0.9/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a, late");
	ASSERT_EQ(it[0].remote, 51, "within the stale time: every unit of b's since a asked");
	/* b alone for 1.2 s more: a is idle on the source. */
	for (int i = 0; i < 12; i++) {
		usleep(100000);
		item(&it[0], "198.18.0.9/32", 100);
		ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b");
	}
	item(&it[0], "198.18.0.9/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a back");
	ASSERT_EQ(it[0].remote, 0, "a inherits nothing of b's 1200 units while a was idle");
	item(&it[0], "198.18.0.9/32", 5);
	ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b");
	item(&it[0], "198.18.0.9/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a");
	ASSERT_EQ(it[0].remote, 5, "then a gets b's units again");
	/* Everything expires: Redis is back to its baseline. */
	ASSERT_OK(redis_srv_cli(&s, &out, "--scan --pattern 'rl:{g2*'"), "scan");
	ASSERT_CONTAINS(out, "rl:{g2:0}:d:", "the sources' hash");
	ASSERT_CONTAINS(out, "rl:{g2:0}:o:", "the claims' hash");
	ASSERT_CONTAINS(out, "rl:{g2:0}:m", "the bucket's id");
	ASSERT_CONTAINS(out, "rl:{g2}:nodes", "the nodes' key");
	free(out);
	out = NULL;
	ASSERT_OK(redis_srv_cli(&s, &out, "PTTL rl:{g2}:nodes"), "PTTL");
	ASSERT_TRUE(out && atoi(out) > 1500 && atoi(out) <= 2000, "the nodes expire after the TTL");
	free(out);
	out = NULL;
	/* The claims and the bucket's id within 2 claim times (2 x 30 TTL), and an eighth. */
	ASSERT_OK(rl_sh(&out,
			"for k in $(redis-cli -s '%s' --scan --pattern 'rl:{g2:0}:[om]*'); do "
			"redis-cli -s '%s' PTTL \"$k\"; done | sort -n | tail -1",
			s.sock, s.sock),
		  "PTTL");
	ASSERT_TRUE(out && atoi(out) > 0 && atoi(out) <= 17 * 30 * 2000 / 8, "the claims expire");
	free(out);
	out = NULL;
	/*
	 * The sources' hashes at the end of the epoch after their own: 2 TTL at
	 * most after their last write; the next epoch's, made ahead, 1/8 TTL more.
	 */
	usleep(4400000);
	ASSERT_OK(redis_srv_cli(&s, &out,
				"--scan --pattern 'rl:{g2*' | grep -v ':o:' | grep -v "
				"':m$' | wc -l"),
		  "scan");
	ASSERT_STREQ(out, "0\n", "every key but the claims expired after 2 TTL");
out:
	free(out);
	rl_sync_agent_fini(&a);
	rl_sync_agent_fini(&b);
	redis_srv_stop(&s);
}

TEST(sync_policy)
{
	struct rl_sync_agent a = {}, b = {}, c = {};
	struct rl_sync_cfg ca, cb, cc;
	char pol_a[128] = POLICY, err[512];
	struct rl_sync_item it[1];
	struct redis_srv s;

	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_for(&ca, &s, "g3", "a", 50 * MS, RL_SYNC_FB_LOCAL);
	cfg_for(&cb, &s, "g3", "b", 50 * MS, RL_SYNC_FB_LOCAL);
	cfg_for(&cc, &s, "other", "c", 50 * MS, RL_SYNC_FB_LOCAL);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, pol_a, err, sizeof(err)), err))
		goto out;
	/* b with another rate runs in fallback, naming the line and the node. */
	ASSERT_EQ(rl_sync_agent_init(&b, &cb, POLICY2, err, sizeof(err)), 1, "fallback");
	ASSERT_CONTAINS(err, "node 'a' of group 'g3' has another policy", "names the node");
	ASSERT_CONTAINS(err, "rate: 2000/1 here, 1000/1 on a", "names the first difference");
	ASSERT_CONTAINS(err, "falling back to local until they agree", "says it falls back");
	ASSERT_EQ(b.st.state, RL_SYNC_POLICY_MISMATCH, "state policy-mismatch");
	item(&it[0], "198.18.0.1/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 1, "b runs, in fallback");
	ASSERT_EQ(it[0].remote, 0, "b: local fallback, no charge");
	ASSERT_EQ(b.st.state, RL_SYNC_POLICY_MISMATCH, "still policy-mismatch");
	rl_sync_agent_fini(&b);
	/* Another group may have another policy. */
	if (!ASSERT_OK(rl_sync_agent_init(&c, &cc, POLICY2, err, sizeof(err)), err))
		goto out;
	/* The refused node changed nothing: a goes on, alone. */
	item(&it[0], "198.18.0.1/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a undisturbed");
	ASSERT_EQ(a.st.nodes, 1, "b was never a node of the group");
	/* b with the same policy runs; then a's policy changes (set): a falls back, b goes on. */
	if (!ASSERT_OK(rl_sync_agent_init(&b, &cb, POLICY, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "same policy");
	ASSERT_EQ(b.st.nodes, 2, "two nodes");
	memcpy(pol_a, "algo=gcra\n", 10);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 1, "a sees b: fallback");
	ASSERT_EQ(a.st.state, RL_SYNC_POLICY_MISMATCH, "a: policy-mismatch");
	ASSERT_TRUE(a.r != NULL, "a keeps its connection");
	ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b goes on");
	/* a set back: syncing again at the next round trip. */
	memcpy(pol_a, "algo=token-bucket\n", 18);
	ASSERT_STREQ(pol_a, POLICY, "a's policy as before");
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a agrees again");
	ASSERT_EQ(a.st.state, RL_SYNC_CONNECTED, "a: connected");
	/* Lines that differ in their key are quoted whole. */
	ASSERT_TRUE(rl_sync_policy_diff("a=1\nb=2\n", "a=1\nc=2\n", "n", err, sizeof(err)),
		    "differ");
	ASSERT_STREQ(err, "'b=2' here, 'c=2' on n", "whole lines");
	ASSERT_TRUE(rl_sync_policy_diff("a=1\n", "a=1\nb=2\n", "n", err, sizeof(err)), "longer");
	ASSERT_STREQ(err, "'' here, 'b=2' on n", "a missing line");
	ASSERT_TRUE(!rl_sync_policy_diff("a=1\nb=2", "a=1\nb=2", "n", err, sizeof(err)), "equal");
out:
	rl_sync_agent_fini(&a);
	rl_sync_agent_fini(&b);
	rl_sync_agent_fini(&c);
	redis_srv_stop(&s);
}

/* Steps of @ag (one source, @units) until one returns @want, at most @max: how many it took. */
static int steps_until(struct rl_sync_agent *ag, int want, int max, __u64 units, __u64 *remote)
{
	struct rl_sync_item it[1];
	char err[512];

	for (int i = 1; i <= max; i++) {
		double t0 = rl_test_mono();
		int ret;

		item(&it[0], "198.18.0.7/32", units);
		ret = rl_sync_agent_step(ag, it, 1, err, sizeof(err));
		if (remote)
			*remote = it[0].remote;
		if (ret == want)
			return i;
		/* Keep to the interval, as the agent's loop does. */
		t0 += (double)ag->cfg.interval_ns / 1e9 - rl_test_mono();
		if (t0 > 0)
			usleep((useconds_t)(t0 * 1e6));
	}
	return max + 1;
}

TEST(sync_fallback_kill)
{
	struct rl_sync_agent a = {}, b = {}, c = {};
	struct rl_sync_cfg ca, cb, cc;
	struct redis_srv s;
	char err[512];
	__u64 remote;
	double t0;

	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_for(&ca, &s, "g4", "a", 50 * MS, RL_SYNC_FB_SHARE);
	cfg_for(&cb, &s, "g4", "b", 50 * MS, RL_SYNC_FB_LOCAL);
	cfg_for(&cc, &s, "g4", "c", 50 * MS, RL_SYNC_FB_LOCAL);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sync_agent_init(&b, &cb, POLICY, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sync_agent_init(&c, &cc, POLICY, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(steps_until(&a, 0, 1, 10, NULL), 1, "a synced");
	ASSERT_EQ(a.st.nodes, 3, "three nodes");
	redis_srv_kill(&s);
	/* The very next round trip falls back: share charges 2 x its own units. */
	t0 = rl_test_mono();
	ASSERT_EQ(steps_until(&a, 1, 1, 10, &remote), 1, "a falls back at once");
	ASSERT_LE((__u64)((rl_test_mono() - t0) * 1000), 50, "within an interval");
	ASSERT_EQ(remote, 20, "share: own units x (3 nodes - 1)");
	ASSERT_EQ(a.st.state, RL_SYNC_FALLBACK_SHARE, "state share");
	ASSERT_EQ(steps_until(&b, 1, 1, 10, &remote), 1, "b falls back at once");
	ASSERT_EQ(remote, 0, "local: no charge");
	ASSERT_EQ(b.st.state, RL_SYNC_FALLBACK_LOCAL, "state local");
	/* Down for 10 intervals: counted, with tries every interval then every other one. */
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(steps_until(&a, 1, 1, 10, NULL), 1, "still down");
	ASSERT_EQ(a.st.fallback_intervals_total, 11, "intervals in fallback");
	ASSERT_TRUE(a.st.errors_total >= 6 && a.st.errors_total <= 11, "tries with backoff");
	ASSERT_EQ(a.st.syncs_total, 1, "no round trip while down");
	/* Back (empty: the script and every key are gone): syncing within two intervals. */
	if (!ASSERT_TRUE(redis_srv_restart(&s), "restart"))
		goto out;
	ASSERT_LE(steps_until(&a, 0, 4, 10, NULL), 2, "a resumes within two intervals");
	ASSERT_LE(steps_until(&b, 0, 4, 10, NULL), 2, "b resumes within two intervals");
	ASSERT_LE(steps_until(&c, 0, 4, 10, NULL), 2, "c resumes within two intervals");
	ASSERT_EQ(a.st.state, RL_SYNC_CONNECTED, "connected again");
	/* And exchanges units again: b passed 10 since a last asked. */
	ASSERT_EQ(steps_until(&a, 0, 1, 10, &remote), 1, "a");
	ASSERT_EQ(remote, 20, "b's and c's units since a last asked");
out:
	rl_sync_agent_fini(&a);
	rl_sync_agent_fini(&b);
	rl_sync_agent_fini(&c);
	redis_srv_stop(&s);
}

TEST(sync_fallback_slow)
{
	struct rl_sync_agent a = {};
	struct rl_sync_cfg ca;
	struct redis_srv s;
	char err[512];
	double t0, t1;
	int n, sfd = -1;

	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_for(&ca, &s, "g5", "a", 50 * MS, RL_SYNC_FB_LOCAL);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(steps_until(&a, 0, 1, 1, NULL), 1, "synced");
	/* The server stops answering for 600 ms. */
	t0 = rl_test_mono();
	sfd = redis_srv_sleep(&s, "0.6");
	ASSERT_TRUE(sfd >= 0, "DEBUG SLEEP");
	ASSERT_EQ(steps_until(&a, 1, 1, 1, NULL), 1, "fallback");
	t1 = rl_test_mono();
	ASSERT_LE((__u64)((t1 - t0) * 1000), 100, "the round trip gave up after about an interval");
	ASSERT_EQ(a.st.state, RL_SYNC_FALLBACK_LOCAL, "local");
	/* About 0.5 s more of sleep, then back within two intervals of it. */
	n = steps_until(&a, 0, 40, 1, NULL);
	ASSERT_LE(n, 40, "resumed");
	ASSERT_TRUE(rl_test_mono() - t0 < 0.6 + 0.15,
		    "within two intervals of the server answering");
out:
	if (sfd >= 0)
		close(sfd);
	rl_sync_agent_fini(&a);
	redis_srv_stop(&s);
}

TEST(sync_fallback_auth)
{
	struct rl_sync_agent a = {};
	struct rl_sync_cfg ca;
	struct redis_srv s;
	char err[512];
	__u64 cmds;

	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_for(&ca, &s, "g6", "a", 50 * MS, RL_SYNC_FB_LOCAL);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err))
		goto out;
	/*
	 * The scripts flushed: reloaded in the same round trip (the two EVALSHAs,
	 * then SCRIPT LOAD twice and the two EVALSHAs again).
	 */
	ASSERT_OK(redis_srv_cli(&s, NULL, "SCRIPT FLUSH"), "SCRIPT FLUSH");
	cmds = a.commands_total;
	ASSERT_EQ(steps_until(&a, 0, 1, 1, NULL), 1, "NOSCRIPT reloads");
	ASSERT_EQ(a.commands_total - cmds, 6, "six commands, once");
	/* A password set under a running agent: the live connection stays authenticated. */
	ASSERT_OK(redis_srv_cli(&s, NULL, "CONFIG SET requirepass s3cret"), "requirepass");
	ASSERT_EQ(steps_until(&a, 0, 1, 1, NULL), 1, "the open connection goes on");
	/* Dropped, the agent reconnects without the password: refused, fallback. */
	ASSERT_OK(redis_srv_cli(&s, NULL, "-a s3cret --no-auth-warning CLIENT KILL TYPE normal"),
		  "CLIENT KILL");
	ASSERT_EQ(steps_until(&a, 1, 1, 1, NULL), 1, "fallback");
	ASSERT_EQ(steps_until(&a, 1, 1, 1, NULL), 1, "NOAUTH: still fallback");
	ASSERT_EQ(a.st.state, RL_SYNC_FALLBACK_LOCAL, "local");
	ASSERT_OK(redis_srv_cli(&s, NULL, "-a s3cret --no-auth-warning CONFIG SET requirepass ''"),
		  "password lifted");
	ASSERT_LE(steps_until(&a, 0, 4, 1, NULL), 2, "resumed within two intervals");
out:
	rl_sync_agent_fini(&a);
	redis_srv_stop(&s);
}

TEST_FLAGS(sync_lock, RL_TEST_ROOT)
{
	char err[256], want[64], *out = NULL;
	int a, b;

	a = rl_sync_lock("rlsynctest0", err, sizeof(err));
	if (!ASSERT_TRUE(a >= 0, err))
		return;
	/* flock() locks conflict between two opens even in one process. */
	b = rl_sync_lock("rlsynctest0", err, sizeof(err));
	ASSERT_EQ(b, -EBUSY, "second agent refused");
	snprintf(want, sizeof(want), "another sync agent (pid %d) runs for rlsynctest0", getpid());
	ASSERT_CONTAINS(err, want, "names the pid");
	if (b >= 0)
		close(b);
	b = rl_sync_lock("rlsynctest1", err, sizeof(err));
	ASSERT_TRUE(b >= 0, "another interface is another lock");
	rl_sync_unlock("rlsynctest1", b);
	rl_sync_unlock("rlsynctest0", a);
	/* Released, the files go (a clean exit leaves none). */
	ASSERT_OK(rl_sh(&out, "ls " RL_SYNC_LOCK_DIR " | grep -c 'rlsynctest[01]' || true"), "ls");
	ASSERT_STREQ(out, "0\n", "no lock file left");
	free(out);
	/* The first gone, the next takes it. */
	b = rl_sync_lock("rlsynctest0", err, sizeof(err));
	ASSERT_TRUE(b >= 0, "free again");
	rl_sync_unlock("rlsynctest0", b);
	rl_sh(NULL, "rm -f " RL_SYNC_LOCK_DIR "/sync-netns-*-rlsynctest[01].lock");
}

/* Run "xdp-ratelimit sync ARGS" (bounded by timeout 5); stderr into *err. */
static int sync_cli(char **err, const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 5 %s/xdp-ratelimit sync %s", rl_build_dir, args);
	return rl_run(cmd, NULL, err);
}

TEST_FLAGS(sync_cli_bad_input, RL_TEST_ROOT)
{
	static const struct {
		const char *args, *msg;
		int status;
	} cases[] = {
		{ "lo", "--redis URL is required", 2 },
		{ "lo --redis redis//127.0.0.1:1", "is not a Redis URL", 2 },
		{ "lo --redis redis://127.0.0.1", "has no :PORT", 2 },
		{ "lo --redis unix://relative", "needs an absolute socket path", 2 },
		{ "lo --redis unix:///x --interval 0",
		  "--interval: '0' is out of range: from 1ms to 1m", 2 },
		{ "lo --redis unix:///x --interval 0s", "'0s' is out of range", 2 },
		{ "lo --redis unix:///x --interval 2m", "'2m' is out of range", 2 },
		{ "lo --redis unix:///x --interval 61s", "'61s' is out of range", 2 },
		{ "lo --redis unix:///x --fallback none", "'none' is neither local nor share", 2 },
		{ "lo --redis unix:///x --group 'a{b}'", "--group: 'a{b}' is not 1-63", 2 },
		{ "lo --redis unix:///x --node ''", "--node: '' is not 1-63", 2 },
		/* Unreachable: past Redis (in fallback), to the interface, which has no limiter. */
		{ "lo --redis unix:///nonexistent/redis.sock",
		  "xdp-ratelimit is not attached to 'lo'", 1 },
	};
	struct redis_srv s = {};
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	char args[512], want[128], *err = NULL;
	int lfd = -1;
	double t0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(sync_cli(&err, cases[i].args), cases[i].status, cases[i].args);
		ASSERT_CONTAINS(err, cases[i].msg, cases[i].args);
		free(err);
		err = NULL;
	}
	/* Nothing listens on the port: an outage, not a refusal; on to the interface. */
	snprintf(args, sizeof(args), "lo --redis redis://127.0.0.1:%u", redis_srv_free_port());
	ASSERT_EQ(sync_cli(&err, args), 1, "no limiter on lo");
	ASSERT_CONTAINS(err, "xdp-ratelimit is not attached to 'lo'", "past Redis");
	free(err);
	err = NULL;
	/* A server that accepts (the kernel's backlog) and never answers: 1 s, then an error. */
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ASSERT_TRUE(lfd >= 0, "socket") ||
	    !ASSERT_OK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), "bind") ||
	    !ASSERT_OK(listen(lfd, 4), "listen") ||
	    !ASSERT_OK(getsockname(lfd, (struct sockaddr *)&sa, &len), "getsockname"))
		goto out;
	snprintf(args, sizeof(args), "lo --redis redis://127.0.0.1:%u", ntohs(sa.sin_port));
	t0 = rl_test_mono();
	ASSERT_EQ(sync_cli(&err, args), 1, "a server that never answers");
	ASSERT_CONTAINS(err, "xdp-ratelimit is not attached to 'lo'", "past Redis after 1 s");
	ASSERT_TRUE(rl_test_mono() - t0 >= 0.9 && rl_test_mono() - t0 < 3,
		    "bounded by the connect timeout");
	free(err);
	err = NULL;
	/* A wrong password, and none where one is needed. */
	if (!redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, true), "redis-server"))
		goto out;
	ASSERT_OK(redis_srv_cli(&s, NULL, "CONFIG SET requirepass s3cret"), "requirepass");
	snprintf(args, sizeof(args), "lo --redis redis://:wrong@127.0.0.1:%u", s.port);
	ASSERT_EQ(sync_cli(&err, args), 1, "wrong password");
	snprintf(want, sizeof(want), "redis://127.0.0.1:%u/0: AUTH refused: WRONGPASS", s.port);
	ASSERT_CONTAINS(err, want, "says the password is wrong");
	ASSERT_TRUE(err && !strstr(err, "wrong@"), "and does not print it");
	free(err);
	err = NULL;
	snprintf(args, sizeof(args), "lo --redis redis://127.0.0.1:%u", s.port);
	ASSERT_EQ(sync_cli(&err, args), 1, "no password");
	ASSERT_CONTAINS(err, "NOAUTH", "says a password is needed");
	ASSERT_CONTAINS(err, "give :PASSWORD@ in the URL", "and how to give it");
	free(err);
	err = NULL;
	/* The right one gets past Redis, to the interface (lo has no limiter). */
	snprintf(args, sizeof(args), "lo --redis redis://:s3cret@127.0.0.1:%u/1", s.port);
	ASSERT_EQ(sync_cli(&err, args), 1, "interface without a limiter");
	ASSERT_CONTAINS(err, "xdp-ratelimit is not attached to 'lo'", "says so, naming it");
	ASSERT_TRUE(err && !strstr(err, "AUTH"), "Redis accepted");
out:
	free(err);
	if (lfd >= 0)
		close(lfd);
	redis_srv_stop(&s);
}

/* The agent's state in "stats IFACE --json" on @ns, into @json (malloc'd). */
static bool sync_stats(struct rl_ns *ns, char **json)
{
	free(*json);
	*json = NULL;
	return !rl_ns_cli(ns, json, NULL, "stats %s --json", ns->rx_if) && *json &&
	       strstr(*json, "\"sync\":");
}

/*
 * Started while Redis is down (at boot, Redis not up yet): the agent runs in
 * fallback rather than exit, and syncs once the server answers; all within
 * bounded waits.
 */
TEST_FLAGS(sync_starts_without_redis, RL_TEST_ROOT)
{
	char log[64] = "", cmd[1024], *json = NULL, *text = NULL, lockf[160];
	struct redis_srv s = {};
	struct rl_ns ns = {};
	bool ok = false;
	pid_t pid = 0;
	int st = 0;
	double t0;

	if (!redis_srv_need())
		return;
	/* The server's socket path, then no server on it. */
	if (!ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	redis_srv_kill(&s);
	if (!ASSERT_OK(rl_ns_create(&ns), "namespace pair"))
		goto out;
	snprintf(cmd, sizeof(cmd), "attach %s --rate 1000 --mode skb", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", cmd))
		goto out;
	snprintf(log, sizeof(log), "/tmp/rlt-%d-syncdown.log", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "exec nsenter --net=/run/netns/%s %s/xdp-ratelimit sync %s --redis %s "
		 "--group down --node n1 --interval 100ms 2>%s </dev/null",
		 ns.rx, rl_build_dir, ns.rx_if, s.url, log);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (!ASSERT_TRUE(pid > 0, "fork"))
		goto out;
	/* In fallback, running, within 5 s. */
	for (t0 = rl_test_mono(); rl_test_mono() - t0 < 5 && !ok; usleep(50000)) {
		ok = sync_stats(&ns, &json) && strstr(json, "\"state\":\"fallback-local\"") &&
		     strstr(json, "\"running\":true");
		if (waitpid(pid, &st, WNOHANG) == pid) {
			pid = 0;
			break;
		}
	}
	free(text);
	text = NULL;
	rl_sh(&text, "cat %s", log);
	if (!ASSERT_TRUE(ok, "stats: fallback-local, running") ||
	    !ASSERT_TRUE(pid > 0, "the agent runs without Redis"))
		goto out;
	ASSERT_CONTAINS(json, "\"syncs_total\":0,", "no round trip yet");
	ASSERT_CONTAINS(text, "falling back to local", "it says it falls back");
	/* Redis comes: connected and syncing within 2 intervals, bounded here by 3 s. */
	if (!ASSERT_TRUE(redis_srv_restart(&s), "redis-server up"))
		goto out;
	ok = false;
	for (t0 = rl_test_mono(); rl_test_mono() - t0 < 3 && !ok; usleep(50000))
		ok = sync_stats(&ns, &json) && strstr(json, "\"state\":\"connected\"") &&
		     !strstr(json, "\"syncs_total\":0,");
	ASSERT_TRUE(ok, "stats: connected, round trips made");
	fprintf(stderr, "    connected %.2f s after redis-server came up\n", rl_test_mono() - t0);
	free(text);
	text = NULL;
	rl_sh(&text, "cat %s", log);
	ASSERT_CONTAINS(text, "syncing resumed", "it says it syncs");
	/* SIGTERM: a clean stop, and no lock file left. */
	kill(pid, SIGTERM);
	for (t0 = rl_test_mono(); rl_test_mono() - t0 < 5 && waitpid(pid, &st, WNOHANG) != pid;
	     usleep(10000))
		;
	if (ASSERT_TRUE(rl_test_mono() - t0 < 5, "stopped within 5 s")) {
		pid = 0;
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status 0");
	}
	snprintf(lockf, sizeof(lockf), "ls %s/sync-netns-*-%s.lock 2>/dev/null | wc -l",
		 RL_SYNC_LOCK_DIR, ns.rx_if);
	free(text);
	text = NULL;
	rl_sh(&text, "%s", lockf);
	ASSERT_STREQ(text, "0\n", "its lock file is gone");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (log[0])
		unlink(log);
	free(json);
	free(text);
	rl_ns_destroy(&ns);
	redis_srv_stop(&s);
}

/*
 * End to end (needs the kernel side, user/lib/sync_kern.h): NODES receiving
 * namespaces, each with its own limiter and its own agent (run with nsenter,
 * as the README says: "ip netns exec" hides the host's bpffs), all syncing
 * through one redis-server's socket, and one sending namespace with a veth
 * pair to each (rl_ns_create_star), as behind a load balancer: one source
 * (198.18.0.1) sent from there, one trafgen per veth.
 *	sync_e2e_even		3x the limit split evenly: without agents about 3x r t, with
 *				them within 5% of r t + b (token-bucket 1000/s, burst 100)
 *	sync_e2e_split		the same split 70/20/10
 *	sync_e2e_gcra		the same with gcra
 *	sync_e2e_faults_local	server killed and restarted, DEBUG SLEEP, a password set, an
 *				agent SIGKILLed and restarted, one after another: in each
 *				fault's window the total stays within the local fallback's
 *				bound, every agent says it fell back and resumed, and stats
 *				shows it connected again; the killed agent is not-running in
 *				stats and xdp_ratelimit_sync_up 0 in the exporter meanwhile
 *	sync_e2e_faults_share	the same with --fallback share: about limit / NODES per host
 *				while Redis fails
 *	sync_e2e_cli		two agents refused, another policy runs in fallback, SIGINT stops
 *				cleanly, a SIGKILLed agent's successor starts
 *	sync_e2e_many		50 sources at 3x, with background sources under their limit
 *				(none dropped), at 100/s
 */
#define NODES	  3
#define E2E_RATE  1000ULL
#define E2E_BURST 100ULL

struct fleet {
	struct rl_ns ns[NODES];
	pid_t agent[NODES];
	char log[NODES][64];
	struct redis_srv s;
	bool redis_up;
};

/* The agent's standard error so far (malloc'd), or NULL. */
static char *agent_log(struct fleet *f, int i)
{
	char *out = NULL;

	if (rl_sh(&out, "cat '%s' 2>/dev/null", f->log[i])) {
		free(out);
		return NULL;
	}
	return out;
}

/* Stop agent @i with @sig (then SIGKILL after 3 s): its exit status, or -1. */
static int agent_stop(struct fleet *f, int i, int sig)
{
	int st = 0;

	if (f->agent[i] <= 0)
		return -1;
	kill(f->agent[i], sig);
	for (int t = 0; t < 300; t++) {
		if (waitpid(f->agent[i], &st, WNOHANG) == f->agent[i]) {
			f->agent[i] = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		usleep(10000);
	}
	kill(f->agent[i], SIGKILL);
	waitpid(f->agent[i], &st, 0);
	f->agent[i] = 0;
	return -1;
}

/* Start agent @i with @extra options; true once it says it syncs (at most 5 s). */
static bool agent_start(struct fleet *f, int i, const char *extra)
{
	char cmd[1024], *prev;
	size_t before;
	pid_t pid;

	snprintf(f->log[i], sizeof(f->log[i]), "/tmp/rlt-%d-sync%d.log", getpid(), i);
	prev = agent_log(f, i);
	before = prev ? strlen(prev) : 0;
	free(prev);
	snprintf(cmd, sizeof(cmd),
		 "exec nsenter --net=/run/netns/%s %s/xdp-ratelimit sync %s --redis %s "
		 "--group e2e --node n%d %s 2>>%s </dev/null",
		 f->ns[i].rx, rl_build_dir, f->ns[i].rx_if, f->s.url, i, extra, f->log[i]);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		/* Never outlives the runner. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	f->agent[i] = pid;
	for (int t = 0; t < 500; t++) {
		char *log = agent_log(f, i);
		/* This agent's line: the log keeps its predecessors'. */
		bool up = log && strlen(log) > before && strstr(log + before, "node(s) live");
		int st;

		free(log);
		if (up)
			return true;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			f->agent[i] = 0;
			break;
		}
		usleep(10000);
	}
	{
		char *log = agent_log(f, i);

		fprintf(stderr, "    agent %d did not start:\n%s", i, log ? log : "");
		free(log);
	}
	agent_stop(f, i, SIGKILL);
	return false;
}

static void fleet_down(struct fleet *f)
{
	for (int i = 0; i < NODES; i++) {
		agent_stop(f, i, SIGTERM);
		if (f->log[i][0])
			unlink(f->log[i]);
	}
	rl_ns_destroy_star(f->ns, NODES);
	redis_srv_stop(&f->s);
}

/* The star (one sender, a veth to each receiver), a limiter on each receiver (@policy), the server. */
static bool fleet_up(struct fleet *f, const char *policy)
{
	char args[256];

	memset(f, 0, sizeof(*f));
	if (!redis_srv_start(&f->s, false))
		return false;
	if (rl_ns_create_star(f->ns, NODES))
		return false;
	for (int i = 0; i < NODES; i++) {
		snprintf(args, sizeof(args), "attach %s %s", f->ns[i].rx_if, policy);
		if (!rl_ns_cli_ok(&f->ns[i], "attach", args))
			return false;
	}
	return true;
}

/* The source's packets passed on pair @i so far (rate-limited IPv4 frames not limited). */
static __u64 passed_on(struct fleet *f, int i)
{
	struct rl_counters c;

	if (rl_ns_counters(&f->ns[i], &c))
		return 0;
	return c.ipv4 - c.limited;
}

static __u64 passed_total(struct fleet *f)
{
	__u64 n = 0;

	for (int i = 0; i < NODES; i++)
		n += passed_on(f, i);
	return n;
}

/* The source's packets that reached the limiters, passed or not. */
static __u64 offered_total(struct fleet *f)
{
	struct rl_counters c;
	__u64 n = 0;

	for (int i = 0; i < NODES; i++)
		if (!rl_ns_counters(&f->ns[i], &c))
			n += c.ipv4;
	return n;
}

/*
 * Send 198.18.0.1 to each pair at @pps[i] for @secs, calling @during(f, t)
 * every 50 ms (t: seconds since the start); *@dur is the measured length
 * (trafgen's rate is not exactly 1/gap: see netns.c). What passed meanwhile.
 */
/*
 * While every flow runs: what passed and for how long. trafgen's pace under
 * load is uneven, and once a flow has ended the others may offer less than
 * the limit, so what the fleet must pass is measured over this window.
 */
struct window {
	double secs;
	__u64 passed;
};

static __u64 send_load(struct fleet *f, const unsigned int *pps, double secs, double *dur,
		       void (*during)(struct fleet *f, double t), struct window *all)
{
	struct rl_flow fl[NODES] = {};
	char gap[NODES][16];
	__u64 before = passed_total(f), offered = offered_total(f);
	double t0 = rl_test_mono();
	bool done, first = true;

	for (int i = 0; i < NODES; i++) {
		if (!pps[i])
			continue;
		/* trafgen spends about 20 us per packet besides the gap (netns.c). */
		snprintf(gap[i], sizeof(gap[i]), "%uus", 1000000 / pps[i] - 20);
		fl[i].src = "198.18.0.1";
		fl[i].count = (unsigned long)(pps[i] * secs);
		fl[i].gap = gap[i];
		fl[i].limit_s = (unsigned int)(secs * 2) + 5;
		if (rl_flow_start(&f->ns[i], &fl[i]))
			fprintf(stderr, "    flow %d did not start\n", i);
	}
	do {
		bool one_ended = false;

		done = true;
		for (int i = 0; i < NODES; i++) {
			if (fl[i].pid && !rl_flow_done(&fl[i]))
				done = false;
			else if (pps[i])
				one_ended = true;
		}
		if (first && one_ended && all) {
			all->secs = rl_test_mono() - t0;
			all->passed = passed_total(f) - before;
			first = false;
		}
		if (during)
			during(f, rl_test_mono() - t0);
		usleep(50000);
	} while (!done && rl_test_mono() - t0 < secs * 2 + 5);
	*dur = rl_test_mono() - t0;
	for (int i = 0; i < NODES; i++)
		if (fl[i].pid || fl[i].cfg[0])
			rl_flow_stop(&fl[i]);
	/* The last frames through the receive path. */
	usleep(100000);
	offered = offered_total(f) - offered;
	fprintf(stderr, "    offered %llu packets in %.2f s: %.2fx the limit\n",
		(unsigned long long)offered, *dur, (double)offered / (*dur * E2E_RATE));
	return passed_total(f) - before;
}

/* One accuracy run: the split @pps for 10 s with agents: within 5% of r t + b. */
static void accuracy_run(const char *policy, const unsigned int *pps, bool baseline)
{
	struct window all = {};
	struct fleet f;
	__u64 passed, want;
	double dur;
	char what[160];

	if (!redis_srv_need())
		return;
	if (!ASSERT_TRUE(fleet_up(&f, policy), "fleet"))
		goto out;
	if (baseline) {
		/* Without agents each node passes its own limit: about 3x. */
		__u64 o0 = offered_total(&f), offered;

		passed = send_load(&f, pps, 3, &dur, NULL, NULL);
		offered = offered_total(&f) - o0;
		want = (__u64)((double)E2E_RATE * dur) + E2E_BURST;
		fprintf(stderr,
			"    without agents: %llu passed in %.2f s (r t + b = %llu: %.2fx)\n",
			(unsigned long long)passed, dur, (unsigned long long)want,
			(double)passed / (double)want);
		/*
		 * trafgen's pace under load is below its gap: not always 3x
		 * (seen 1.47x on a loaded CI run). Well over one limit, as far
		 * as what was offered allows.
		 */
		ASSERT_TRUE(offered * 10 > want * 13, "trafgen offered over 1.3x the limit");
		ASSERT_TRUE(passed * 10 > (offered < 2 * want ? offered : 2 * want) * 9,
			    "without agents, well over one limit");
		/* The buckets fill again before the agents start. */
		usleep(300000);
	}
	for (int i = 0; i < NODES; i++)
		if (!ASSERT_TRUE(agent_start(&f, i, "--interval 100ms"), "agent"))
			goto out;
	passed = send_load(&f, pps, 10, &dur, NULL, &all);
	want = (__u64)((double)E2E_RATE * dur) + E2E_BURST;
	snprintf(what, sizeof(what), "%llu passed in %.2f s, r t + b = %llu (%.3f)",
		 (unsigned long long)passed, dur, (unsigned long long)want,
		 (double)passed / (double)want);
	fprintf(stderr, "    with agents: %s; per node %llu %llu %llu\n", what,
		(unsigned long long)passed_on(&f, 0), (unsigned long long)passed_on(&f, 1),
		(unsigned long long)passed_on(&f, 2));
	/* Never more than one limit over the whole run... */
	ASSERT_LE(passed, want + want / 20, what);
	/* ...and the limit while every node was offered its share. */
	want = (__u64)((double)E2E_RATE * all.secs) + E2E_BURST;
	snprintf(what, sizeof(what),
		 "while all flows ran: %llu passed in %.2f s, r t + b = %llu (%.3f)",
		 (unsigned long long)all.passed, all.secs, (unsigned long long)want,
		 (double)all.passed / (double)want);
	fprintf(stderr, "    %s\n", what);
	ASSERT_LE(want - want / 20, all.passed, what);
	for (int i = 0; i < NODES; i++)
		ASSERT_EQ(agent_stop(&f, i, SIGTERM), 0, "clean stop");
out:
	fleet_down(&f);
}

TEST_FLAGS(sync_e2e_even, RL_TEST_ROOT)
{
	static const unsigned int pps[NODES] = { 1000, 1000, 1000 };

	accuracy_run("--rate 1000 --burst 100", pps, true);
}

TEST_FLAGS(sync_e2e_split, RL_TEST_ROOT)
{
	static const unsigned int pps[NODES] = { 2100, 600, 300 };

	accuracy_run("--rate 1000 --burst 100", pps, false);
}

TEST_FLAGS(sync_e2e_gcra, RL_TEST_ROOT)
{
	static const unsigned int pps[NODES] = { 1000, 1000, 1000 };

	accuracy_run("--algo gcra --rate 1000 --burst 100", pps, false);
}

/*
 * The faults of the issue, one after another in one run (interval 100 ms),
 * each in its own window: from the moment it is made to SETTLE after it is
 * lifted. In each window what the fleet passed must stay within the
 * fallback's bound, and by its end every agent must have said it fell back
 * and resumed and report "connected" again in stats --json.
 *
 * The bound of a window of W s whose fault lasted D s: r W + b, plus what
 * the hosts pass beyond their share while they cannot sync:
 *	Redis failing, fallback local: each host passes its full limit,
 *		(NODES - 1) r (D + 4 intervals)
 *	Redis failing, fallback share: each host passes limit / NODES, so only
 *		the intervals to notice and to resume: (NODES - 1) r 4 intervals
 *	an agent SIGKILLed and restarted (Redis fine): its host alone runs on
 *		its own limit, r (D + 4 intervals); the others never fall back
 */
#define FAULT_IV     0.1 /* the agents' --interval, in seconds */
#define FAULT_SETTLE 0.6 /* after a fault is lifted: 2 intervals to resume, then margin */

enum fault_kind { FAULT_REDIS_KILL, FAULT_REDIS_SLOW, FAULT_REDIS_AUTH, FAULT_AGENT_KILL };

static const struct {
	const char *name;
	enum fault_kind kind;
	double at, lasts; /* seconds into the run, and for how long */
} fault_plan[] = {
	{ "redis-server killed and restarted", FAULT_REDIS_KILL, 1.0, 1.5 },
	{ "Redis answering slowly (DEBUG SLEEP)", FAULT_REDIS_SLOW, 3.5, 0.8 },
	{ "a wrong password (requirepass)", FAULT_REDIS_AUTH, 5.3, 1.0 },
	{ "an agent SIGKILLed and restarted", FAULT_AGENT_KILL, 7.3, 0.5 },
};
#define NFAULTS (int)(sizeof(fault_plan) / sizeof(fault_plan[0]))

/* What one run measured of each fault. */
struct fault_seen {
	int step; /* 0: not made, 1: made, 2: lifted, 3: measured */
	double t0, lifted, t1; /* made, lifted, window end (seconds into the run) */
	__u64 p0, p1; /* passed_total() at t0 and t1 */
	size_t log_at[NODES]; /* each agent's log length at t0 */
};

static struct {
	const char *extra; /* the agents' options */
	struct fault_seen seen[NFAULTS];
} fault_run;

/* The length of agent @i's log so far. */
static size_t log_len(struct fleet *f, int i)
{
	char *log = agent_log(f, i);
	size_t n = log ? strlen(log) : 0;

	free(log);
	return n;
}

/* The string value of "@key" after "@within" in @json, into @buf; false if absent. */
static bool json_str(const char *json, const char *within, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *p = json ? strstr(json, within) : NULL;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = p ? strstr(p, pat) : NULL;
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p++ != '"')
		return false;
	while (*p && *p != '"' && n + 1 < len)
		buf[n++] = *p++;
	buf[n] = '\0';
	return *p == '"';
}

/*
 * The agent's state on node @i as "stats IFACE --json" shows it ("?" if it
 * cannot), and whether it says its process runs.
 */
static void stats_state(struct fleet *f, int i, char *state, size_t len, bool *running)
{
	char *out = NULL, *sync;

	if (rl_ns_cli(&f->ns[i], &out, NULL, "stats %s --json", f->ns[i].rx_if) ||
	    !json_str(out, "\"sync\":", "state", state, len))
		snprintf(state, len, "?");
	sync = out ? strstr(out, "\"sync\":") : NULL;
	if (running)
		*running = sync && strstr(sync, "\"running\":true");
	free(out);
}

/* xdp_ratelimit_sync_up of node @i as the exporter renders it: 0, 1, or -1 if absent. */
static int exporter_sync_up(struct fleet *f, int i)
{
	char path[96], want[160], *out = NULL, *p;
	struct stat st;
	size_t len;
	int v = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", f->ns[i].rx);
	if (stat(path, &st) || rl_metrics_render(&out, &len))
		goto out;
	snprintf(want, sizeof(want), "\nxdp_ratelimit_sync_up{iface=\"%s\",netns=\"%llu\"} ",
		 f->ns[i].rx_if, (unsigned long long)st.st_ino);
	p = strstr(out, want);
	if (p)
		v = atoi(p + strlen(want));
out:
	free(out);
	return v;
}

/* Make fault @k. */
static void fault_make(struct fleet *f, int k)
{
	char secs[16];
	int fd;

	switch (fault_plan[k].kind) {
	case FAULT_REDIS_KILL:
		redis_srv_kill(&f->s);
		break;
	case FAULT_REDIS_SLOW:
		/* The server answers nobody for this long; the fd is the command's connection. */
		snprintf(secs, sizeof(secs), "%.1f", fault_plan[k].lasts);
		fd = redis_srv_sleep(&f->s, secs);
		if (fd >= 0)
			close(fd);
		break;
	case FAULT_REDIS_AUTH:
		/* A password, and the agents' connections dropped: they come back without it. */
		redis_srv_cli(&f->s, NULL, "CONFIG SET requirepass s3cret");
		redis_srv_cli(&f->s, NULL, "-a s3cret --no-auth-warning CLIENT KILL TYPE normal");
		break;
	case FAULT_AGENT_KILL: {
		char state[32];
		bool running;
		int up;

		ASSERT_EQ(agent_stop(f, 0, SIGKILL), 128 + SIGKILL, "agent 0 SIGKILLed");
		/* Its status stays in the pins, its process is gone: stats and the exporter say so. */
		stats_state(f, 0, state, sizeof(state), &running);
		ASSERT_STREQ(state, "not-running", "stats --json: the killed agent's state");
		ASSERT_TRUE(!running, "stats --json: the killed agent does not run");
		up = exporter_sync_up(f, 0);
		ASSERT_EQ(up, 0, "exporter: xdp_ratelimit_sync_up of the killed agent");
		up = exporter_sync_up(f, 1);
		ASSERT_EQ(up, 1, "exporter: xdp_ratelimit_sync_up of a running agent");
		break;
	}
	}
}

/* Lift fault @k. */
static void fault_lift(struct fleet *f, int k)
{
	switch (fault_plan[k].kind) {
	case FAULT_REDIS_KILL:
		ASSERT_TRUE(redis_srv_restart(&f->s), "redis-server restarted");
		break;
	case FAULT_REDIS_SLOW:
		break; /* DEBUG SLEEP ends by itself */
	case FAULT_REDIS_AUTH:
		ASSERT_OK(redis_srv_cli(&f->s, NULL,
					"-a s3cret --no-auth-warning CONFIG SET requirepass ''"),
			  "password lifted");
		break;
	case FAULT_AGENT_KILL:
		ASSERT_TRUE(agent_start(f, 0, fault_run.extra), "agent 0 restarted");
		break;
	}
}

/* At the end of fault @k's window: every agent says what it went through, and syncs again. */
static void fault_recovered(struct fleet *f, int k)
{
	const struct fault_seen *s = &fault_run.seen[k];
	bool share = strstr(fault_run.extra, "share") != NULL;
	char what[160], state[32];
	bool running;

	for (int i = 0; i < NODES; i++) {
		char *log = agent_log(f, i);
		const char *since = log && strlen(log) >= s->log_at[i] ? log + s->log_at[i] : NULL;

		snprintf(what, sizeof(what), "%s: agent %d", fault_plan[k].name, i);
		if (fault_plan[k].kind != FAULT_AGENT_KILL) {
			ASSERT_CONTAINS(since,
					share ? "falling back to share" : "falling back to local",
					what);
			ASSERT_CONTAINS(since, "syncing resumed", what);
		} else if (i == 0) {
			ASSERT_CONTAINS(since, "node(s) live", what);
		} else {
			/* Redis was fine: the others never noticed. */
			ASSERT_TRUE(since && !strstr(since, "falling back"), what);
		}
		free(log);
		stats_state(f, i, state, sizeof(state), &running);
		ASSERT_STREQ(state, "connected", what);
		ASSERT_TRUE(running, what);
		if (fault_plan[k].kind == FAULT_AGENT_KILL && i == 0)
			ASSERT_EQ(exporter_sync_up(f, 0), 1, "exporter: the successor's sync_up");
	}
}

static void faults(struct fleet *f, double t)
{
	double entry = rl_test_mono();

	for (int k = 0; k < NFAULTS; k++) {
		struct fault_seen *s = &fault_run.seen[k];

		if (s->step == 0 && t >= fault_plan[k].at) {
			for (int i = 0; i < NODES; i++)
				s->log_at[i] = log_len(f, i);
			s->p0 = passed_total(f);
			s->t0 = t + rl_test_mono() - entry;
			fault_make(f, k);
			s->step = 1;
		} else if (s->step == 1 && t >= s->t0 + fault_plan[k].lasts) {
			fault_lift(f, k);
			/* Lifted once Redis answers again, or the killed agent's successor syncs. */
			s->lifted = t + rl_test_mono() - entry;
			s->step = 2;
		} else if (s->step == 2 && t >= s->lifted + FAULT_SETTLE) {
			s->p1 = passed_total(f);
			s->t1 = t + rl_test_mono() - entry;
			s->step = 3;
			fault_recovered(f, k);
		}
	}
}

/* One run of every fault with --fallback @fallback. */
static void faults_run(const char *fallback)
{
	static const unsigned int pps[NODES] = { 1000, 1000, 1000 };
	const __u64 r = E2E_RATE;
	bool share = !strcmp(fallback, "share");
	__u64 passed, want, bound, extra_all = 0;
	char what[200], extra[64];
	struct fleet f;
	double dur;

	if (!redis_srv_need())
		return;
	snprintf(extra, sizeof(extra), "--interval 100ms --fallback %s", fallback);
	memset(&fault_run, 0, sizeof(fault_run));
	fault_run.extra = extra;
	if (!ASSERT_TRUE(fleet_up(&f, "--rate 1000 --burst 100"), "fleet"))
		goto out;
	for (int i = 0; i < NODES; i++)
		if (!ASSERT_TRUE(agent_start(&f, i, extra), "agent"))
			goto out;
	passed = send_load(&f, pps, 9, &dur, faults, NULL);
	for (int k = 0; k < NFAULTS; k++) {
		const struct fault_seen *s = &fault_run.seen[k];
		double w = s->t1 - s->t0, d = s->lifted - s->t0, unsynced;
		__u64 got = s->p1 - s->p0, base = (__u64)((double)r * w) + E2E_BURST, extra_k;

		if (!ASSERT_EQ(s->step, 3, fault_plan[k].name))
			continue;
		if (fault_plan[k].kind == FAULT_AGENT_KILL)
			unsynced = (double)r * (d + 4 * FAULT_IV);
		else if (share)
			unsynced = (double)((NODES - 1) * r) * 4 * FAULT_IV;
		else
			unsynced = (double)((NODES - 1) * r) * (d + 4 * FAULT_IV);
		extra_k = (__u64)unsynced;
		extra_all += extra_k;
		snprintf(
			what, sizeof(what),
			"%s (%s): %llu passed in %.2f s (fault %.2f s), r t + b = %llu, bound %llu",
			fault_plan[k].name, fallback, (unsigned long long)got, w, d,
			(unsigned long long)base, (unsigned long long)(base + extra_k));
		fprintf(stderr, "    %s\n", what);
		ASSERT_LE(got, base + extra_k, what);
		/* The kernel kept limiting: not dropping everything. */
		ASSERT_LE(base / 2, got, what);
	}
	want = (__u64)((double)r * dur) + E2E_BURST;
	bound = want + extra_all + E2E_BURST; /* the restarted node's burst */
	snprintf(what, sizeof(what),
		 "whole run (%s): %llu passed in %.2f s, r t + b = %llu, bound %llu", fallback,
		 (unsigned long long)passed, dur, (unsigned long long)want,
		 (unsigned long long)bound);
	fprintf(stderr, "    %s\n", what);
	ASSERT_LE(passed, bound, what);
	ASSERT_LE(want - want / 20, passed, "the kernel kept limiting, not dropping everything");
	for (int i = 0; i < NODES; i++)
		ASSERT_EQ(agent_stop(&f, i, SIGTERM), 0, "still running, clean stop");
out:
	fleet_down(&f);
}

TEST_FLAGS(sync_e2e_faults_local, RL_TEST_ROOT)
{
	faults_run("local");
}

TEST_FLAGS(sync_e2e_faults_share, RL_TEST_ROOT)
{
	faults_run("share");
}

TEST_FLAGS(sync_e2e_cli, RL_TEST_ROOT)
{
	char want[96], *err = NULL, *log = NULL;
	struct fleet f;
	int pid;

	if (!redis_srv_need())
		return;
	if (!ASSERT_TRUE(fleet_up(&f, "--rate 1000 --burst 100"), "fleet") ||
	    !ASSERT_TRUE(agent_start(&f, 0, ""), "agent"))
		goto out;
	/* A second agent on the same interface: refused, naming the first. */
	pid = f.agent[0];
	ASSERT_EQ(rl_ns_cli(&f.ns[0], NULL, &err, "sync %s --redis %s --node x", f.ns[0].rx_if,
			    f.s.url),
		  1, "second agent");
	snprintf(want, sizeof(want), "another sync agent (pid %d) runs for %s", pid, f.ns[0].rx_if);
	ASSERT_CONTAINS(err, want, "names the first agent's pid");
	free(err);
	err = NULL;
	/*
	 * Another policy on another node of the group: that agent runs in
	 * fallback, naming the line, and stats says policy-mismatch.
	 */
	{
		char args[128], state[32];

		snprintf(args, sizeof(args), "set %s --rate 2000", f.ns[1].rx_if);
		if (ASSERT_TRUE(rl_ns_cli_ok(&f.ns[1], "set", args), "set") &&
		    ASSERT_TRUE(agent_start(&f, 1, ""), "another policy: runs")) {
			usleep(300000);
			log = agent_log(&f, 1);
			ASSERT_CONTAINS(log, "node 'n0' of group 'e2e' has another policy",
					"names the node");
			ASSERT_CONTAINS(log, "falling back to local until they agree",
					"says it falls back");
			free(log);
			log = NULL;
			stats_state(&f, 1, state, sizeof(state), NULL);
			ASSERT_STREQ(state, "policy-mismatch", "stats: policy-mismatch");
			ASSERT_EQ(agent_stop(&f, 1, SIGTERM), 0, "SIGTERM in fallback");
		}
	}
	/* SIGINT: exit 0, says it stopped. */
	ASSERT_EQ(agent_stop(&f, 0, SIGINT), 0, "SIGINT");
	log = agent_log(&f, 0);
	ASSERT_CONTAINS(log, "stopped after", "says it stopped");
	free(log);
	log = NULL;
	/* SIGKILL: the lock goes with the process; the next agent starts. */
	if (!ASSERT_TRUE(agent_start(&f, 0, ""), "agent again"))
		goto out;
	ASSERT_EQ(agent_stop(&f, 0, SIGKILL), 128 + SIGKILL, "killed");
	ASSERT_TRUE(agent_start(&f, 0, ""), "a killed agent's successor starts");
	ASSERT_EQ(agent_stop(&f, 0, SIGTERM), 0, "SIGTERM");
out:
	free(err);
	free(log);
	fleet_down(&f);
}

/* A synthetic source: 198.18.0.N/32 with generation 1; its name counts the calls. */
static struct rl_sync_src src_n(unsigned int n, __u64 units)
{
	struct rl_sync_src s = { .units = units };

	s.k.src.addr[2] = htonl(0xffff);
	s.k.src.addr[3] = htonl(0xc6120000 | n);
	s.k.gen = 1;
	return s;
}

static int name_calls;

static int name_n(void *ctx, const struct rl_state_key *k, char *buf, size_t len)
{
	(void)ctx;
	name_calls++;
	snprintf(buf, len, "198.18.0.%u/32", ntohl(k->src.addr[3]) & 0xffff);
	return 0;
}

static int parse_n(void *ctx, const char *src, struct rl_state_key *k)
{
	unsigned int n;
	struct rl_sync_src s;

	(void)ctx;
	if (sscanf(src, "198.18.0.%u/32", &n) != 1)
		return -EINVAL;
	s = src_n(n, 0);
	*k = s.k;
	return 0;
}

/* The units of @src in the last merge's request, or -1 if it is not there. */
static long long merged(const struct rl_sync_recent *r, const char *src)
{
	for (size_t i = 0; i < r->nitems; i++)
		if (!strcmp(r->items[i].src, src))
			return (long long)r->items[i].units;
	return -1;
}

/* What the store answers for @src in the last request: claimed here (@local), @remote units. */
static void answer(struct rl_sync_recent *r, const char *src, bool local, __u64 remote)
{
	for (size_t i = 0; i < r->nitems; i++)
		if (!strcmp(r->items[i].src, src)) {
			r->items[i].local = local;
			r->items[i].remote = remote;
		}
}

static int state_of(const struct rl_sync_recent *r, unsigned int n)
{
	struct rl_sync_src s = src_n(n, 0);

	return rl_sync_recent_state(r, &s.k);
}

/* The units charged to 198.18.0.@n by the last apply, or -1. */
static long long charged_to(const struct rl_sync_recent *r, unsigned int n)
{
	struct rl_sync_src s = src_n(n, 0);

	for (size_t i = 0; i < r->nchg; i++)
		if (!memcmp(&r->chg[i].k, &s.k, sizeof(s.k)))
			return (long long)r->chg[i].units;
	return -1;
}

TEST(sync_recent)
{
	struct rl_sync_recent_cfg cfg = {
		.keep = 2,
		.keep_claimed = 6,
		.claim_min = 3,
		.claim_span = 1,
		.claims_max = 3,
		.max = 100,
	};
	struct rl_sync_item inbox[1] = {};
	struct rl_sync_learned l = { .synced = true, .nbuckets = 1 };
	__u64 ids[1] = { 7 };
	struct rl_sync_src d[4];
	struct rl_sync_recent r;

	l.bucket_id = ids;
	rl_sync_recent_init(&r, &cfg);
	name_calls = 0;
	d[0] = src_n(1, 5);
	d[1] = src_n(2, 3);
	d[2] = src_n(1, 2); /* the same source twice: summed */
	/* 1: both new, both sent (claims), each named once. */
	if (!ASSERT_OK(rl_sync_recent_merge(&r, d, 3, name_n, NULL), "merge 1"))
		goto out;
	ASSERT_EQ(r.nitems, 2, "two sources");
	ASSERT_EQ(r.claims, 2, "two claims");
	ASSERT_EQ(merged(&r, "198.18.0.1/32"), 7, "summed");
	ASSERT_EQ(merged(&r, "198.18.0.2/32"), 3, "units");
	ASSERT_EQ(name_calls, 2, "each named once");
	/* The store: .1 only here (claimed), .2 also elsewhere (shared, 4 units there). */
	answer(&r, "198.18.0.1/32", true, 0);
	answer(&r, "198.18.0.2/32", false, 4);
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 1");
	ASSERT_EQ(state_of(&r, 1), RL_SRC_CLAIMED, ".1 claimed");
	ASSERT_EQ(state_of(&r, 2), RL_SRC_SHARED, ".2 shared");
	ASSERT_EQ(r.nchg, 1, "one charge");
	ASSERT_EQ(charged_to(&r, 2), 4, ".2 charged what the other passed");
	/* 2: both passed: the claimed one is not sent, the shared one is. */
	d[0] = src_n(1, 6);
	d[1] = src_n(2, 1);
	ASSERT_OK(rl_sync_recent_merge(&r, d, 2, name_n, NULL), "merge 2");
	ASSERT_EQ(r.nitems, 1, "only the shared source");
	ASSERT_EQ(merged(&r, "198.18.0.1/32"), -1, "the claimed one is not sent");
	ASSERT_EQ(merged(&r, "198.18.0.2/32"), 1, "the shared one is");
	/* Another node reported .1: the inbox says so with what it passed since. */
	snprintf(inbox[0].src, sizeof(inbox[0].src), "198.18.0.1/32");
	inbox[0].remote = 9;
	l.inbox = inbox;
	l.ninbox = 1;
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 2");
	l.ninbox = 0;
	ASSERT_EQ(state_of(&r, 1), RL_SRC_SHARED, ".1 shared from the inbox");
	ASSERT_EQ(charged_to(&r, 1), 9, ".1 charged the others' units");
	/* 3: .1 goes with this interval's units and those of the last, which were not sent. */
	d[0] = src_n(1, 4);
	ASSERT_OK(rl_sync_recent_merge(&r, d, 1, name_n, NULL), "merge 3");
	ASSERT_EQ(merged(&r, "198.18.0.1/32"), 6 + 4, "held units go now");
	ASSERT_EQ(merged(&r, "198.18.0.2/32"), 0, ".2 remembered, 0 units");
	ASSERT_EQ(name_calls, 2, "no name formatted again");
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 3");
	/* Two more intervals without .2: kept for 2 intervals, then forgotten. */
	ASSERT_OK(rl_sync_recent_merge(&r, d, 1, name_n, NULL), "merge 4");
	ASSERT_EQ(merged(&r, "198.18.0.2/32"), 0, "2 intervals after: kept");
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 4");
	ASSERT_OK(rl_sync_recent_merge(&r, d, 1, name_n, NULL), "merge 5");
	ASSERT_EQ(merged(&r, "198.18.0.2/32"), -1, "3 intervals after: forgotten");
	ASSERT_EQ(r.nitems, 1, "one source");
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 5");
	/* At most 3 claims a round: the fourth new source waits for the next. */
	for (unsigned int i = 0; i < 4; i++)
		d[i] = src_n(10 + i, 1);
	ASSERT_OK(rl_sync_recent_merge(&r, d, 4, name_n, NULL), "merge 6");
	ASSERT_EQ(r.claims, 3, "3 claims");
	ASSERT_EQ(r.nitems, 4, "3 claims and the shared source");
	for (size_t i = 0; i < r.nitems; i++)
		r.items[i].local = strcmp(r.items[i].src, "198.18.0.1/32") != 0;
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 6");
	ASSERT_OK(rl_sync_recent_merge(&r, d, 4, name_n, NULL), "merge 7");
	ASSERT_EQ(r.claims, 1, "the fourth claim");
	ASSERT_EQ(r.nitems, 2, "it and the shared source");
	for (size_t i = 0; i < r.nitems; i++)
		r.items[i].local = strcmp(r.items[i].src, "198.18.0.1/32") != 0;
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 7");
	/* Claims are sent again 3-4 intervals after: .10-.12 claimed at 6, .13 at 7. */
	for (int t = 8; t <= 11; t++) {
		ASSERT_OK(rl_sync_recent_merge(&r, d, 4, name_n, NULL), "merge");
		if (t == 8)
			ASSERT_EQ(r.claims, 0, "no claim due 2 intervals after");
		for (size_t i = 0; i < r.nitems; i++) {
			/* Sent as a claim the agent holds: the fallback share does not charge it. */
			if (strcmp(r.items[i].src, "198.18.0.1/32"))
				ASSERT_TRUE(r.items[i].local, "a claim held");
			r.items[i].local = strcmp(r.items[i].src, "198.18.0.1/32") != 0;
		}
		ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply");
		if (t == 11)
			ASSERT_EQ(state_of(&r, 10), RL_SRC_CLAIMED, "still claimed");
	}
	/* The bucket's keys lost (its id changed): every claim is sent again next round. */
	ids[0] = 8;
	ASSERT_OK(rl_sync_recent_merge(&r, d, 4, name_n, NULL), "merge 12");
	for (size_t i = 0; i < r.nitems; i++)
		r.items[i].local = strcmp(r.items[i].src, "198.18.0.1/32") != 0;
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 12");
	ASSERT_EQ(state_of(&r, 12), RL_SRC_NEW, "new again");
	ASSERT_OK(rl_sync_recent_merge(&r, d, 4, name_n, NULL), "merge 13");
	ASSERT_EQ(r.claims, 3, "claimed again, 3 a round");
	/* An inbox source the table forgot: taken in as shared, and charged. */
	rl_sync_recent_apply(&r, &l, parse_n, NULL);
	snprintf(inbox[0].src, sizeof(inbox[0].src), "198.18.0.99/32");
	inbox[0].remote = 3;
	l.ninbox = 1;
	ASSERT_OK(rl_sync_recent_merge(&r, d, 0, name_n, NULL), "merge 14");
	ASSERT_OK(rl_sync_recent_apply(&r, &l, parse_n, NULL), "apply 14");
	ASSERT_EQ(state_of(&r, 99), RL_SRC_SHARED, "taken in");
	ASSERT_EQ(charged_to(&r, 99), 3, "and charged");
	/* A set: all forgotten. */
	rl_sync_recent_clear(&r);
	ASSERT_OK(rl_sync_recent_merge(&r, NULL, 0, name_n, NULL), "merge 15");
	ASSERT_EQ(r.nitems, 0, "nothing after clear");
out:
	rl_sync_recent_free(&r);
}

/* An agent and its table of what to send, on synthetic sources 198.18.0.N. */
struct snode {
	struct rl_sync_agent ag;
	struct rl_sync_recent rc;
	__u64 charged[2048]; /* per source, since the start */
};

static bool snode_up(struct snode *nd, const struct redis_srv *s, const char *name)
{
	struct rl_sync_recent_cfg rcfg;
	struct rl_sync_cfg cfg;
	char err[512];

	memset(nd, 0, sizeof(*nd));
	cfg_for(&cfg, s, "g9", name, 50 * MS, RL_SYNC_FB_LOCAL);
	/* A round of 1000 claims may take longer than 50 ms on a loaded machine. */
	cfg.timeout_ns = 1000 * MS;
	if (!ASSERT_OK(rl_sync_agent_init(&nd->ag, &cfg, POLICY, err, sizeof(err)), err))
		return false;
	rl_sync_agent_recent_cfg(&nd->ag, &rcfg);
	rl_sync_recent_init(&nd->rc, &rcfg);
	return true;
}

static void snode_down(struct snode *nd)
{
	rl_sync_agent_fini(&nd->ag);
	rl_sync_recent_free(&nd->rc);
}

/* One round of @nd: sources [@lo, @hi) passed @units each. Bytes sent; ~0 on failure. */
static __u64 snode_round(struct snode *nd, unsigned int lo, unsigned int hi, __u64 units)
{
	struct rl_sync_src d[2048];
	__u64 tx = nd->ag.st.redis_tx_bytes_total;
	char err[512];
	size_t n = 0;

	for (unsigned int i = lo; i < hi; i++)
		d[n++] = src_n(i, units);
	if (rl_sync_agent_round(&nd->ag, &nd->rc, d, n, name_n, parse_n, NULL, err, sizeof(err))) {
		fprintf(stderr, "    round: %s\n", err);
		return ~0ULL;
	}
	for (size_t i = 0; i < nd->rc.nchg; i++)
		nd->charged[(ntohl(nd->rc.chg[i].k.src.addr[3]) & 0xffff) % 2048] +=
			nd->rc.chg[i].units;
	return nd->ag.st.redis_tx_bytes_total - tx;
}

TEST(sync_shared_only)
{
	struct snode *a = calloc(2, sizeof(*a)), *b = a + 1;
	struct redis_srv s;
	__u64 first, later = 0, x;
	double t0;
	int st;

	if (!a || !redis_srv_need() || !ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	if (!snode_up(a, &s, "a") || !snode_up(b, &s, "b"))
		goto out;
	/* 1000 sources on a alone: claimed in the first round, then not sent at all. */
	first = snode_round(a, 1, 1001, 5);
	ASSERT_EQ(a->rc.nitems, 1000, "the first round claims every source");
	ASSERT_EQ(a->rc.claimed, 1000, "claimed: only a has them");
	for (int r = 0; r < 4; r++) {
		__u64 xg = a->ag.exchanges_total, cmds = a->ag.commands_total;

		x = snode_round(a, 1, 1001, 5);
		ASSERT_EQ(a->rc.nitems, 0, "nothing sent after the first round");
		ASSERT_EQ(a->ag.exchanges_total - xg, 1, "one exchange a round");
		ASSERT_EQ(a->ag.commands_total - cmds, 2, "the group's script and the bucket's");
		later = x > later ? x : later;
	}
	fprintf(stderr,
		"    1000 sources on one node: %llu bytes out in the first round, %llu a "
		"round after\n",
		(unsigned long long)first, (unsigned long long)later);
	ASSERT_LE(later * 20, first, "a round after the first sends under 5% of its bytes");
	ASSERT_LE(later, 1024, "a round of no source is under 1 KiB");
	ASSERT_EQ(a->ag.st.charged_units_total, 0, "nothing charged");

	/* b reports .5: it becomes shared; b's first ask gets nothing. */
	ASSERT_TRUE(snode_round(b, 5, 6, 7) != ~0ULL, "b");
	ASSERT_EQ(b->rc.shared, 1, "b: .5 is shared");
	ASSERT_EQ(b->charged[5], 0, "b: nothing before its first ask");
	/* a's next round: the inbox; a is charged b's 7 and holds its own 3 of this round. */
	ASSERT_TRUE(snode_round(a, 1, 1001, 3) != ~0ULL, "a");
	ASSERT_EQ(a->ag.learned.ninbox, 1, "a: told by its inbox");
	ASSERT_EQ(a->charged[5], 7, "a: charged b's units since .5 became shared");
	ASSERT_EQ(state_of(&a->rc, 5), RL_SRC_SHARED, "a: .5 shared");
	ASSERT_EQ(a->rc.nitems, 0, "a: the held units go with the next round");
	/* Then each sends it every round and is charged exactly what the other passed. */
	for (int r = 0; r < 5; r++) {
		ASSERT_TRUE(snode_round(a, 1, 1001, 4) != ~0ULL, "a");
		ASSERT_EQ(a->rc.nitems, 1, "a sends .5 alone");
		ASSERT_TRUE(snode_round(b, 5, 6, 6) != ~0ULL, "b");
	}
	/* b: a's held 3 and 5 rounds of 4; a: b's 7, then 4 rounds of 6 (not b's last yet). */
	ASSERT_EQ(b->charged[5], 3 + 5 * 4, "b: every unit a passed since b first asked");
	ASSERT_EQ(a->charged[5], 7 + 4 * 6, "a: every unit b passed but its last round's");
	for (unsigned int i = 0; i < 2048; i++)
		if (i != 5 && !ASSERT_EQ(a->charged[i], 0, "a: the others are a's alone"))
			break;

	/* b gone: a, alone on .5 for a TTL, claims it again and stops sending it. */
	t0 = rl_test_mono();
	st = -1;
	while (rl_test_mono() - t0 < 6) {
		if (!ASSERT_TRUE(snode_round(a, 1, 1001, 1) != ~0ULL, "a"))
			break;
		st = state_of(&a->rc, 5);
		if (st == RL_SRC_CLAIMED)
			break;
		usleep(50000);
	}
	fprintf(stderr, "    .5 claimed again by a %.1f s after b's last round (TTL %llu ms)\n",
		rl_test_mono() - t0, (unsigned long long)a->ag.ttl_ms);
	ASSERT_EQ(st, RL_SRC_CLAIMED, "a alone for a TTL: claimed again");
	ASSERT_TRUE(rl_test_mono() - t0 >= a->ag.ttl_ms / 1000.0, "not before a TTL");
	snode_round(a, 1, 1001, 1);
	ASSERT_EQ(a->rc.nitems, 0, "and not sent");
out:
	if (a) {
		snode_down(a);
		snode_down(b);
	}
	free(a);
	redis_srv_stop(&s);
}

/*
 * A trafgen flow of our own from pair @ns's sending end: @frame is trafgen's
 * configuration with one %s for the destination MAC. Bounded by -n and by
 * timeout(1). The pid of its process group, or -1.
 */
static pid_t raw_flow(struct rl_ns *ns, const char *frame, unsigned long count, const char *gap,
		      unsigned int limit_s, char *cfg, size_t cfglen)
{
	static unsigned int seq;
	char cmd[512];
	FILE *fp;
	pid_t pid;

	snprintf(cfg, cfglen, "/tmp/rlt-%d-syncflow%u.cfg", getpid(), ++seq);
	fp = fopen(cfg, "w");
	if (!fp)
		return -1;
	fprintf(fp, frame, ns->rx_mac);
	fclose(fp);
	snprintf(cmd, sizeof(cmd),
		 "exec timeout -k 1 %u ip netns exec %s trafgen -o %s -i %s -n %lu -t %s -P 1 -Q "
		 ">/dev/null 2>&1 </dev/null",
		 limit_s, ns->tx, ns->tx_if, cfg, count, gap);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

/*
 * 50 sources at 3x their limit, evenly over the three nodes, with background
 * sources under theirs: random addresses in 198.19.0.0/16 (more than 10,000
 * distinct in a run), each well under the limit, counted by a UDP socket on
 * every node: none may be dropped. The limit is 100/s (burst 10) rather than
 * 1000/s: 50 sources at 3x 1000/s would be 150 kpps, more than trafgen's
 * paced sending does on this 2-CPU VM.
 */
#define MANY	  50
#define MANY_RATE 100ULL
#define MANY_SECS 10

TEST_FLAGS(sync_e2e_many, RL_TEST_ROOT)
{
	static const char heavy[] =
		"{ eth(da=%s), ipv4(sa=198.18.1.1, sa[3]=dinc(1, 50, 1), da=198.18.0.2, ttl=64), "
		"udp(sp=40000, dp=9), fill(0x00, 18) }\n";
	static const char bg[] =
		"{ eth(da=%s), ipv4(sa=198.19.0.0, sa[2]=drnd(), sa[3]=drnd(), da=198.18.0.2, "
		"ttl=64), udp(sp=40000, dp=7), fill(0x00, 18) }\n";
	/* Per node: 50 x 3 x 100 / 3 = 5000 pps of the 50, 700 pps of background. */
	const unsigned long n_heavy = 5000UL * MANY_SECS, n_bg = 700UL * MANY_SECS;
	char cfg[2 * NODES][64] = {};
	pid_t pid[2 * NODES];
	int sock[NODES];
	unsigned long got = 0;
	__u64 passed = 0, want;
	char what[160];
	struct fleet f;
	double t0, dur;
	bool running;

	for (int i = 0; i < 2 * NODES; i++)
		pid[i] = -1;
	for (int i = 0; i < NODES; i++)
		sock[i] = -1;
	if (!redis_srv_need())
		return;
	if (!ASSERT_TRUE(fleet_up(&f, "--rate 100 --burst 10"), "fleet"))
		goto out;
	for (int i = 0; i < NODES; i++) {
		sock[i] = rl_ns_udp_socket(&f.ns[i], AF_INET, 7);
		if (!ASSERT_TRUE(sock[i] >= 0, "socket") ||
		    !ASSERT_TRUE(agent_start(&f, i, "--interval 100ms"), "agent"))
			goto out;
	}
	t0 = rl_test_mono();
	for (int i = 0; i < NODES; i++) {
		/* trafgen spends about 20 us per packet besides the gap (netns.c). */
		pid[2 * i] = raw_flow(&f.ns[i], heavy, n_heavy, "180us", MANY_SECS * 3, cfg[2 * i],
				      sizeof(cfg[0]));
		pid[2 * i + 1] = raw_flow(&f.ns[i], bg, n_bg, "1400us", MANY_SECS * 3,
					  cfg[2 * i + 1], sizeof(cfg[0]));
		if (!ASSERT_TRUE(pid[2 * i] > 0 && pid[2 * i + 1] > 0, "flows"))
			goto out;
	}
	do {
		running = false;
		usleep(50000);
		for (int i = 0; i < NODES; i++)
			got += rl_udp_drain(sock[i]);
		for (int i = 0; i < 2 * NODES; i++) {
			if (pid[i] > 0 && waitpid(pid[i], NULL, WNOHANG) == pid[i])
				pid[i] = -1;
			running |= pid[i] > 0;
		}
	} while (running && rl_test_mono() - t0 < MANY_SECS * 3 + 5);
	dur = rl_test_mono() - t0;
	usleep(100000);
	for (int i = 0; i < NODES; i++) {
		got += rl_udp_drain(sock[i]);
		passed += passed_on(&f, i);
	}
	{
		struct rl_counters c;
		__u64 seen = 0;

		for (int i = 0; i < NODES; i++)
			if (!rl_ns_counters(&f.ns[i], &c))
				seen += c.new_sources;
		fprintf(stderr, "    %llu sources tracked on the nodes\n",
			(unsigned long long)seen);
		ASSERT_LE(10000 + NODES * MANY, seen, "more than 10,000 background sources");
	}
	/* The background passed whole: then what passed of the 50 is the rest. */
	ASSERT_EQ(got, NODES * n_bg, "no background packet dropped");
	passed -= got;
	want = MANY * ((__u64)((double)MANY_RATE * dur) + 10);
	snprintf(what, sizeof(what), "the 50 passed %llu in %.2f s, 50 (r t + b) = %llu (%.3f)",
		 (unsigned long long)passed, dur, (unsigned long long)want,
		 (double)passed / (double)want);
	fprintf(stderr, "    %s\n", what);
	ASSERT_LE(passed, want + want / 20, what);
	ASSERT_LE(want - want / 20, passed, what);
out:
	for (int i = 0; i < 2 * NODES; i++) {
		if (pid[i] > 0) {
			kill(-pid[i], SIGKILL);
			waitpid(pid[i], NULL, 0);
		}
		if (cfg[i][0])
			unlink(cfg[i]);
	}
	for (int i = 0; i < NODES; i++)
		if (sock[i] >= 0)
			close(sock[i]);
	fleet_down(&f);
}

/*
 * A charge leaves a debt: the units charged beyond an empty bucket stay, up
 * to 10 s of the rate, and the clock pays them off. Capped at an empty bucket
 * (ahead_max was tau plus one packet), a node whose own traffic stays under
 * the rate could never be held back by the others' charges: three nodes at
 * the limit each passed 2.3x the limit between them.
 */
TEST(sync_charge_keeps_debt)
{
	static const char *const tb[] = { "--rate", "1000", "--burst", "100", NULL };
	static const char *const gcra[] = { "--algo",  "gcra", "--rate", "1000",
					    "--burst", "100",  NULL };
	const char *const *pols[] = { tb, gcra };
	__u64 now = 1000000000000ULL, ms = 1000000ULL;

	for (size_t i = 0; i < 2; i++) {
		struct rl_config cfg;
		__u64 st, next;

		if (!ASSERT_TRUE(rl_build_config(&cfg, pols[i], NULL), "config"))
			continue;
		st = rl_initial_state(&cfg.params, now);
		/* 600 units charged at once: 500 past an empty bucket. */
		if (!ASSERT_EQ(rl_charge(&cfg.params, st, now, 600, &next), 1, "charged"))
			continue;
		ASSERT_EQ(rl_ahead(&cfg.params, next, rl_vt(&cfg.params, now)),
			  600 * cfg.params.unit_cost, "the whole charge is kept");
		st = next;
		/* In debt for 0.5 s (0.6 s for gcra, whose queue starts empty), then a pass. */
		ASSERT_EQ(rl_step(&cfg.params, st, now + 490 * ms, 1, &next), 0, "in debt");
		ASSERT_EQ(rl_step(&cfg.params, st, now + 601 * ms, 1, &next), 1, "debt paid off");
		/* More than 10 s of the rate is cut there. */
		ASSERT_EQ(rl_charge(&cfg.params, st, now, 100000, &next), 1, "charged");
		ASSERT_LE(rl_ahead(&cfg.params, next, rl_vt(&cfg.params, now)),
			  cfg.params.tau + 10000 * cfg.params.unit_cost + cfg.params.unit_cost * 2,
			  "at most 10 s of debt");
		ASSERT_LE(cfg.params.tau + 10000 * cfg.params.unit_cost,
			  rl_ahead(&cfg.params, next, rl_vt(&cfg.params, now)), "and that much");
	}
}
