// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet sync on a Redis Cluster (user/lib/sync_cluster.h, issue #27) against a
 * real cluster started by each test (tests/lib/redis_cluster.h: Debian's
 * redis-server, 3 masters, with a replica each where a master is killed,
 * joined by redis-cli --cluster create).
 *	sync_cluster_slots	CRC16 and hash tags as Redis computes them; the buckets'
 *				tags fall evenly over the slots
 *	sync_cluster_store	three agents (synthetic sources, the real agent step and
 *				scripts): the keys spread over every master; charges exact
 *				across buckets; a slot moved under them (MOVED followed,
 *				the map read again), one migrating (ASK, then ASKING),
 *				one half migrated (TRYAGAIN: that bucket falls back alone)
 *	sync_cluster_e2e	three limiters and their agents (the CLI) on the cluster:
 *				one source at 3x its limit for 10 s, a slot of its bucket
 *				migrating meanwhile: within 5% of r t + b; then its
 *				master killed: the agents write to the promoted replica
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "netns.h"
#include "redis_cluster.h"
#include "redis_srv.h"
#include "sync_agent.h"
#include "sync_cluster.h"
#include "test.h"

#define POLICY "algo=token-bucket\nrate=1000/1\nburst=100\n"
#define MS     1000000ULL

TEST(sync_cluster_slots)
{
	static const struct {
		const char *key;
		unsigned int slot;
	} keys[] = {
		/* As CLUSTER KEYSLOT answers (Redis 7.0). */
		{ "foo", 12182 },
		{ "123456789", 12739 }, /* CRC16/XMODEM("123456789") = 0x31c3 */
		{ "{user1000}.following", 3443 },
		{ "user1000", 3443 },
		{ "foo{}{bar}", 8363 }, /* an empty tag: the whole key */
		{ "foo{{bar}}zap", 4015 }, /* the tag is "{bar" */
		{ "{bar", 4015 },
	};
	unsigned int seen[RL_CLUSTER_BUCKETS] = {};
	char tag[96], again[96];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ASSERT_EQ(rl_cluster_slot(keys[i].key, strlen(keys[i].key)), keys[i].slot,
			  keys[i].key);
	/* Each bucket's tag in its own 1/32 of the slots, the same on every node. */
	for (unsigned int b = 0; b < RL_CLUSTER_BUCKETS; b++) {
		unsigned int s;

		rl_cluster_bucket_tag("fleet", b, RL_CLUSTER_BUCKETS, tag, sizeof(tag));
		rl_cluster_bucket_tag("fleet", b, RL_CLUSTER_BUCKETS, again, sizeof(again));
		ASSERT_STREQ(tag, again, "deterministic");
		ASSERT_TRUE(!strncmp(tag, "fleet:", 6), "the group's name first");
		s = rl_cluster_slot(tag, strlen(tag));
		ASSERT_EQ(s * RL_CLUSTER_BUCKETS / RL_CLUSTER_SLOTS, b, tag);
		seen[s * RL_CLUSTER_BUCKETS / RL_CLUSTER_SLOTS]++;
	}
	for (unsigned int b = 0; b < RL_CLUSTER_BUCKETS; b++)
		ASSERT_EQ(seen[b], 1, "one bucket per 1/32 of the slots");
	/* One bucket: "GROUP:0" whatever its slot. */
	rl_cluster_bucket_tag("fleet", 0, 1, tag, sizeof(tag));
	ASSERT_STREQ(tag, "fleet:0", "one bucket");
}

/* ---- three agents on synthetic sources ---- */

#define NSRC 600 /* sources: 0-199 only a's, 200-399 a's and b's, 400-599 only c's */

static struct rl_sync_src src_n(unsigned int n, __u64 units)
{
	struct rl_sync_src s = { .units = units };

	s.k.src.addr[2] = htonl(0xffff);
	s.k.src.addr[3] = htonl(0xc6120000 | n);
	s.k.gen = 1;
	return s;
}

static int name_n(void *ctx, const struct rl_state_key *k, char *buf, size_t len)
{
	unsigned int n = ntohl(k->src.addr[3]) & 0xffff;

	(void)ctx;
	snprintf(buf, len, "198.18.%u.%u/32", n >> 8, n & 255);
	return 0;
}

static int parse_n(void *ctx, const char *src, struct rl_state_key *k)
{
	unsigned int hi, lo;
	struct rl_sync_src s;

	(void)ctx;
	if (sscanf(src, "198.18.%u.%u/32", &hi, &lo) != 2)
		return -EINVAL;
	s = src_n(hi << 8 | lo, 0);
	*k = s.k;
	return 0;
}

struct node {
	struct rl_sync_agent ag;
	struct rl_sync_recent rc;
	struct rl_sync_cfg cfg;
	char name[8];
	/* Per source: units it passed since the start, remote units it was charged. */
	__u64 passed[NSRC], charged[NSRC];
};

static bool node_up(struct node *nd, const char *name, const struct redis_cluster *c)
{
	struct rl_sync_recent_cfg rcfg;
	char err[512];

	memset(nd, 0, sizeof(*nd));
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	rl_redis_url_parse(c->url, &nd->cfg.url, err, sizeof(err));
	nd->cfg.group = "cl";
	nd->cfg.node = nd->name;
	/*
	 * 2 s: the test moves slots between rounds, which takes a few seconds
	 * on a loaded machine, and the stale time (3 intervals) must cover that
	 * gap.
	 */
	nd->cfg.interval_ns = 2000 * MS;
	nd->cfg.fallback = RL_SYNC_FB_LOCAL;
	if (!ASSERT_OK(rl_sync_agent_init(&nd->ag, &nd->cfg, POLICY, err, sizeof(err)), err))
		return false;
	rl_sync_agent_recent_cfg(&nd->ag, &rcfg);
	rl_sync_recent_init(&nd->rc, &rcfg);
	return true;
}

static void node_down(struct node *nd)
{
	rl_sync_agent_fini(&nd->ag);
	rl_sync_recent_free(&nd->rc);
}

/* One round of @nd: sources [@lo, @hi) passed @units each. The step's result. */
static int node_round(struct node *nd, unsigned int lo, unsigned int hi, __u64 units)
{
	struct rl_sync_src d[NSRC];
	size_t n = 0;
	char err[512];
	int ret;

	for (unsigned int i = lo; i < hi; i++) {
		d[n++] = src_n(i, units);
		nd->passed[i] += units;
	}
	ret = rl_sync_agent_round(&nd->ag, &nd->rc, d, n, name_n, parse_n, NULL, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "    %s: %s\n", nd->name, err);
	for (size_t i = 0; i < nd->rc.nchg; i++)
		nd->charged[(ntohl(nd->rc.chg[i].k.src.addr[3]) & 0xffff) % NSRC] +=
			nd->rc.chg[i].units;
	return ret;
}

/* A round of each: a on 0-399, b on 200-399, c on 400-599, each unit @units. */
static bool rounds(struct node *a, struct node *b, struct node *c, int n, __u64 units)
{
	bool ok = true;

	for (int i = 0; i < n; i++) {
		ok &= node_round(a, 0, 400, units) == 0;
		ok &= node_round(b, 200, 400, units) == 0;
		ok &= node_round(c, 400, 600, units) == 0;
	}
	return ok;
}

/*
 * What the charges must be: a round is a's, then b's, then c's. a is charged
 * every unit b passed on the shared sources but in b's last round (a has not
 * asked since); b every unit a passed but in a's first round (a claim: only a
 * had them, so they went nowhere).
 */
static void check_exact(struct node *a, struct node *b, struct node *c, __u64 units,
			const char *what)
{
	__u64 ca = 0, cb = 0, cc = 0, wa = 0, wb = 0;

	for (unsigned int i = 0; i < NSRC; i++) {
		ca += a->charged[i];
		cb += b->charged[i];
		cc += c->charged[i];
	}
	for (unsigned int i = 200; i < 400; i++) {
		wa += b->passed[i] - units;
		wb += a->passed[i] - 5;
	}
	fprintf(stderr, "    %s: a charged %llu (want %llu), b %llu (want %llu), c %llu\n", what,
		(unsigned long long)ca, (unsigned long long)wa, (unsigned long long)cb,
		(unsigned long long)wb, (unsigned long long)cc);
	ASSERT_EQ(ca, wa, "a: every unit of b's since a first asked, on the shared sources only");
	ASSERT_EQ(cb, wb, "b: every unit of a's since b first asked");
	ASSERT_EQ(cc, 0, "c: its sources are its own");
}

/* The slot of the bucket of source @src (its text) in @group. */
static unsigned int src_slot(const char *group, const char *src)
{
	char tag[96];

	rl_cluster_bucket_tag(group, rl_sync_src_hash(src) % RL_CLUSTER_BUCKETS, RL_CLUSTER_BUCKETS,
			      tag, sizeof(tag));
	return rl_cluster_slot(tag, strlen(tag));
}

/* The slot of the bucket of synthetic source @n. */
static unsigned int bucket_slot(unsigned int n)
{
	char src[32];

	snprintf(src, sizeof(src), "198.18.%u.%u/32", n >> 8, n & 255);
	return src_slot("cl", src);
}

/*
 * Is the server's clock early enough in an epoch of the TTL and of the claim
 * time that the next @need_ms cross no boundary? A boundary makes new keys,
 * which a slot migrating does not have on both sides (the agents make them
 * ahead, but only in the epoch's last eighth, and the test's rounds are not
 * every interval then).
 */
static bool early_in_epoch(struct redis_cluster *c, const struct rl_sync_agent *ag,
			   unsigned long long need_ms)
{
	char *out = NULL;
	unsigned long long sec, us, now;

	if (redis_cluster_cli(c, 0, &out, "TIME") || !out ||
	    sscanf(out, "%llu\n%llu", &sec, &us) != 2) {
		free(out);
		return true;
	}
	free(out);
	now = sec * 1000 + us / 1000;
	return now % ag->ttl_ms + need_ms < ag->ttl_ms &&
	       now % ag->claim_ms + need_ms < ag->claim_ms;
}

/* Rounds every interval, as the agents run, until early in an epoch (then one more). */
static bool rounds_until_early(struct redis_cluster *c, struct node *a, struct node *b,
			       struct node *cn)
{
	for (int i = 0; i < 30; i++) {
		double t0 = rl_test_mono();

		if (!rounds(a, b, cn, 1, 5))
			return false;
		if (early_in_epoch(c, &a->ag, 6000))
			return true;
		t0 += (double)a->cfg.interval_ns / 1e9 - rl_test_mono();
		if (t0 > 0)
			usleep((useconds_t)(t0 * 1e6));
	}
	return false;
}

/* Server @i's cluster node id. */
static bool node_id(struct redis_cluster *c, int i, char *id, size_t len)
{
	char *out = NULL;
	bool ok = !redis_cluster_cli(c, i, &out, "CLUSTER MYID") && out && strlen(out) > 40;

	if (ok)
		snprintf(id, len, "%.40s", out);
	free(out);
	return ok;
}

/* Move every key of @slot from master @from to master @to (MIGRATE). */
static bool migrate_keys(struct redis_cluster *c, int from, int to, unsigned int slot)
{
	return !rl_sh(NULL,
		      "keys=$(redis-cli -s '%s' CLUSTER GETKEYSINSLOT %u 1000 | tr '\\n' ' ');"
		      " [ -z \"$keys\" ] || redis-cli -s '%s' MIGRATE 127.0.0.1 %u '' 0 5000 KEYS "
		      "$keys | grep -q OK",
		      c->sock[from], slot, c->sock[from], c->port[to]);
}

/* CLUSTER SETSLOT @slot NODE @to on every running master. */
static bool settle_slot(struct redis_cluster *c, int to, unsigned int slot)
{
	char id[48];
	bool ok = node_id(c, to, id, sizeof(id));

	/* The new owner first, as redis-cli --cluster reshard does. */
	ok = ok && !redis_cluster_cli(c, to, NULL, "CLUSTER SETSLOT %u NODE %s", slot, id);
	for (int i = 0; i < c->n && ok; i++)
		if (i != to && c->pid[i] > 0 && redis_cluster_is_master(c, i))
			ok = !redis_cluster_cli(c, i, NULL, "CLUSTER SETSLOT %u NODE %s", slot, id);
	return ok;
}

TEST(sync_cluster_store)
{
	struct node *a = calloc(3, sizeof(*a)), *b = a + 1, *cn = a + 2;
	struct redis_cluster c = {};
	unsigned int slot;
	int from, to, masters = 0, src = -1;
	char idf[48], idt[48], *out = NULL;
	bool ok;

	if (!a || !redis_srv_need())
		goto out;
	if (!ASSERT_TRUE(redis_cluster_start(&c, 3, 0, 1000, NULL), "a cluster of 3 masters"))
		goto out;
	if (!node_up(a, "a", &c) || !node_up(b, "b", &c) || !node_up(cn, "c", &c))
		goto out;
	ASSERT_EQ(a->ag.st.nodes, 1, "a alone at its start");
	/* Each source's first round, then two: a and b share 200-399 in every bucket. */
	if (!ASSERT_TRUE(rounds(a, b, cn, 3, 5), "rounds"))
		goto out;
	ASSERT_EQ(b->ag.st.nodes, 3, "three nodes");
	ASSERT_EQ(a->ag.learned.nbuckets, RL_CLUSTER_BUCKETS, "the cluster's buckets");
	/* Only what is shared is sent: a's 200 own sources and c's 200 are claimed. */
	ASSERT_EQ(a->rc.nitems, 200, "a sends the shared sources only");
	ASSERT_EQ(cn->rc.nitems, 0, "c sends nothing");
	check_exact(a, b, cn, 5, "3 rounds");
	/* The keys spread over every master. */
	fprintf(stderr, "    keys per master:");
	for (int i = 0; i < c.n; i++) {
		long keys;

		if (!redis_cluster_is_master(&c, i))
			continue;
		keys = redis_cluster_dbsize(&c, i);
		fprintf(stderr, " %u: %ld", c.port[i], keys);
		ASSERT_TRUE(keys > 0, "keys on every master");
		masters++;
	}
	fprintf(stderr, "\n");
	ASSERT_EQ(masters, 3, "three masters");

	/* A slot moved for good between two rounds: MOVED, followed, and the map read again. */
	if (!ASSERT_TRUE(rounds_until_early(&c, a, b, cn), "rounds"))
		goto out;
	slot = bucket_slot(250);
	from = redis_cluster_master_of(&c, 0, slot);
	to = from == 0 ? 1 : 0;
	ok = from >= 0 && node_id(&c, from, idf, sizeof(idf)) && node_id(&c, to, idt, sizeof(idt));
	ok = ok && !redis_cluster_cli(&c, to, NULL, "CLUSTER SETSLOT %u IMPORTING %s", slot, idf);
	ok = ok && !redis_cluster_cli(&c, from, NULL, "CLUSTER SETSLOT %u MIGRATING %s", slot, idt);
	ok = ok && migrate_keys(&c, from, to, slot) && settle_slot(&c, to, slot);
	if (!ASSERT_TRUE(ok, "move a slot"))
		goto out;
	if (!ASSERT_TRUE(rounds(a, b, cn, 2, 5), "rounds after the move"))
		goto out;
	ASSERT_TRUE(a->ag.moved_total > 0 && b->ag.moved_total > 0, "MOVED followed");
	fprintf(stderr, "    moved: a %llu MOVED, b %llu\n", (unsigned long long)a->ag.moved_total,
		(unsigned long long)b->ag.moved_total);
	check_exact(a, b, cn, 5, "after a slot moved");

	/* A slot migrating, its keys all moved: ASK, then ASKING on the new master. */
	if (!ASSERT_TRUE(rounds_until_early(&c, a, b, cn), "rounds"))
		goto out;
	slot = bucket_slot(300);
	from = redis_cluster_master_of(&c, 0, slot);
	to = from == 0 ? 2 : 0;
	ok = from >= 0 && node_id(&c, from, idf, sizeof(idf)) && node_id(&c, to, idt, sizeof(idt));
	ok = ok && !redis_cluster_cli(&c, to, NULL, "CLUSTER SETSLOT %u IMPORTING %s", slot, idf);
	ok = ok && !redis_cluster_cli(&c, from, NULL, "CLUSTER SETSLOT %u MIGRATING %s", slot, idt);
	ok = ok && migrate_keys(&c, from, to, slot);
	if (!ASSERT_TRUE(ok, "a slot migrating"))
		goto out;
	if (!ASSERT_TRUE(rounds(a, b, cn, 2, 5), "rounds while migrating"))
		goto out;
	ASSERT_TRUE(a->ag.ask_total > 0 && b->ag.ask_total > 0, "ASK followed");
	ASSERT_EQ(a->ag.st.errors_total, 0, "no bucket failed");
	check_exact(a, b, cn, 5, "while a slot migrates");
	if (!ASSERT_TRUE(settle_slot(&c, to, slot), "the migration ends"))
		goto out;

	/* Half migrated (a key of the slot on each side): TRYAGAIN; that bucket alone falls back. */
	slot = bucket_slot(350);
	from = redis_cluster_master_of(&c, 0, slot);
	to = from == 1 ? 2 : 1;
	ok = from >= 0 && node_id(&c, from, idf, sizeof(idf)) && node_id(&c, to, idt, sizeof(idt));
	ok = ok && !redis_cluster_cli(&c, to, NULL, "CLUSTER SETSLOT %u IMPORTING %s", slot, idf);
	ok = ok && !redis_cluster_cli(&c, from, NULL, "CLUSTER SETSLOT %u MIGRATING %s", slot, idt);
	/* The bucket's m, which every node's script declares. */
	{
		char src[32], tag[96];

		snprintf(src, sizeof(src), "198.18.%u.%u/32", 350 >> 8, 350 & 255);
		rl_cluster_bucket_tag("cl", rl_sync_src_hash(src) % RL_CLUSTER_BUCKETS,
				      RL_CLUSTER_BUCKETS, tag, sizeof(tag));
		ok = ok &&
		     !redis_cluster_cli(&c, from, &out, "MIGRATE 127.0.0.1 %u 'rl:{%s}:m' 0 5000",
					c.port[to], tag) &&
		     out && strstr(out, "OK");
	}
	if (!ASSERT_TRUE(ok, "a slot half migrated"))
		goto out;
	if (!ASSERT_TRUE(rounds(a, b, cn, 1, 5), "rounds while half migrated"))
		goto out;
	ASSERT_TRUE(a->ag.tryagain_total > 0, "TRYAGAIN asked again");
	ASSERT_TRUE(a->ag.st.errors_total > 0 && a->ag.st.state == RL_SYNC_CONNECTED,
		    "that bucket failed, the others synced");
	for (size_t i = 0; i < a->rc.nitems; i++) {
		bool in = src_slot("cl", a->rc.items[i].src) == slot;

		if (in)
			src = (int)i;
		if (!ASSERT_EQ(a->rc.items[i].failed, in, "failed: the items of that bucket only"))
			break;
	}
	ASSERT_TRUE(src >= 0, "items of that bucket failed");
	ok = migrate_keys(&c, from, to, slot) && settle_slot(&c, to, slot);
	if (!ASSERT_TRUE(ok, "the migration ends"))
		goto out;

out:
	free(out);
	if (a) {
		node_down(a);
		node_down(b);
		node_down(cn);
	}
	free(a);
	redis_cluster_stop(&c);
}

/* ---- end to end: three limiters and their agents ---- */

#define E2E_NODES 3
#define E2E_RATE  1000ULL
#define E2E_BURST 100ULL
#define E2E_SRC	  "198.18.0.1"

/*
 * One sending namespace and one receiving namespace joined by three veth
 * pairs; a limiter on each receiving end, each with its own agent (node),
 * and the cluster on the receiving namespace's loopback, where the agents
 * reach it by TCP as on any host. Three limiters of their own maps on one
 * namespace are three nodes as far as the sync is concerned.
 */
struct cfleet {
	struct rl_ns ns; /* pair 0, and the namespaces */
	struct rl_ns pair[E2E_NODES]; /* pair[0] is ns; 1, 2 hold the names of the others */
	struct redis_cluster c;
	pid_t agent[E2E_NODES];
	char log[E2E_NODES][64];
};

static bool cfleet_up(struct cfleet *f)
{
	char args[160], *out = NULL, *p;

	memset(f, 0, sizeof(*f));
	if (!ASSERT_OK(rl_ns_create(&f->ns), "namespaces"))
		return false;
	f->pair[0] = f->ns;
	f->pair[0].up = false;
	for (int i = 1; i < E2E_NODES; i++) {
		struct rl_ns *q = &f->pair[i];

		*q = f->ns;
		q->up = false;
		memset(q->flows, 0, sizeof(q->flows));
		snprintf(q->tx_if, sizeof(q->tx_if), "%.13s%c", f->ns.tx_if, 'a' + i);
		snprintf(q->rx_if, sizeof(q->rx_if), "%.13s%c", f->ns.rx_if, 'a' + i);
		if (!ASSERT_OK(
			    rl_sh(NULL,
				  "set -e; ip link add %1$s netns %2$s type veth peer name %3$s "
				  "netns %4$s; ip netns exec %2$s sysctl -qw "
				  "net.ipv6.conf.%1$s.disable_ipv6=1; ip -n %2$s link set %1$s up;"
				  " ip -n %4$s link set %3$s up",
				  q->tx_if, f->ns.tx, q->rx_if, f->ns.rx),
			    "another pair"))
			return false;
		out = NULL;
		rl_sh(&out, "ip -n %s -o link show dev %s", f->ns.rx, q->rx_if);
		p = out ? strstr(out, "link/ether ") : NULL;
		if (!ASSERT_TRUE(p && sscanf(p, "link/ether %17s", q->rx_mac) == 1, "its MAC")) {
			free(out);
			return false;
		}
		free(out);
	}
	for (int i = 0; i < E2E_NODES; i++) {
		snprintf(args, sizeof(args), "attach %s --rate %llu --burst %llu", f->pair[i].rx_if,
			 E2E_RATE, E2E_BURST);
		if (!rl_ns_cli_ok(&f->ns, "attach", args))
			return false;
	}
	return ASSERT_TRUE(redis_cluster_start(&f->c, 3, 1, 1000, f->ns.rx),
			   "a cluster of 3 masters in the namespace");
}

static int cagent_stop(struct cfleet *f, int i, int sig)
{
	int st = 0;

	if (f->agent[i] <= 0)
		return -1;
	if (rl_proc_stop(&f->agent[i], sig, 3000, &st))
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void cfleet_down(struct cfleet *f)
{
	for (int i = 0; i < E2E_NODES; i++) {
		cagent_stop(f, i, SIGTERM);
		if (f->log[i][0])
			unlink(f->log[i]);
	}
	for (int i = 1; i < E2E_NODES; i++)
		if (f->pair[i].rx_if[0])
			rl_ns_cli(&f->ns, NULL, NULL, "detach %s 2>/dev/null", f->pair[i].rx_if);
	rl_ns_destroy(&f->ns);
	redis_cluster_stop(&f->c);
}

static char *cagent_log(struct cfleet *f, int i)
{
	char *out = NULL;

	if (rl_sh(&out, "cat '%s' 2>/dev/null", f->log[i])) {
		free(out);
		return NULL;
	}
	return out;
}

/* Agent @i on the cluster, every 100 ms; true once it says it syncs (at most 5 s). */
static bool cagent_start(struct cfleet *f, int i)
{
	char cmd[1024];
	pid_t pid;

	snprintf(f->log[i], sizeof(f->log[i]), "/tmp/rlt-%d-cl-sync%d.log", getpid(), i);
	snprintf(cmd, sizeof(cmd),
		 "exec nsenter --net=/run/netns/%s %s/xdp-ratelimit sync %s --redis %s "
		 "--group e2e --node n%d --interval 100ms 2>>%s </dev/null",
		 f->ns.rx, rl_build_dir, f->pair[i].rx_if, f->c.url, i, f->log[i]);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	f->agent[i] = pid;
	for (int t = 0; t < 500; t++) {
		char *log = cagent_log(f, i);
		bool up = log && strstr(log, "node(s) live");

		free(log);
		if (up)
			return true;
		usleep(10000);
	}
	{
		char *log = cagent_log(f, i);

		fprintf(stderr, "    agent %d did not start:\n%s", i, log ? log : "");
		free(log);
	}
	return false;
}

static __u64 cpassed_on(struct cfleet *f, int i)
{
	struct rl_counters k;

	return rl_ns_counters(&f->pair[i], &k) ? 0 : k.ipv4 - k.limited;
}

static __u64 cpassed(struct cfleet *f)
{
	__u64 n = 0;

	for (int i = 0; i < E2E_NODES; i++)
		n += cpassed_on(f, i);
	return n;
}

/* "stats IFACE --json" of limiter @i's sync section: state, master, round trips. */
static bool cstats(struct cfleet *f, int i, char *state, size_t slen, char *master, size_t mlen,
		   unsigned long long *syncs)
{
	char *out = NULL, *p;
	bool ok = false;

	if (!rl_ns_cli(&f->ns, &out, NULL, "stats %s --json", f->pair[i].rx_if) && out &&
	    (p = strstr(out, "\"sync\":"))) {
		char *s = strstr(p, "\"state\":\""), *m = strstr(p, "\"master\":\"");

		if (s && m && rl_json_u64(p, "syncs_total", syncs)) {
			s += 9;
			m += 10;
			snprintf(state, slen, "%.*s", (int)strcspn(s, "\""), s);
			snprintf(master, mlen, "%.*s", (int)strcspn(m, "\""), m);
			ok = true;
		}
	}
	free(out);
	return ok;
}

/* Migrate the slot of the source's bucket to another master, pausing where ASK answers. */
static bool migrate_during(struct redis_cluster *c, unsigned int slot)
{
	int from = redis_cluster_master_of(c, 0, slot), to;
	char idf[48], idt[48];
	bool ok;

	if (from < 0)
		return false;
	to = -1;
	for (int i = 0; i < c->n && to < 0; i++)
		if (i != from && redis_cluster_is_master(c, i))
			to = i;
	ok = to >= 0 && node_id(c, from, idf, sizeof(idf)) && node_id(c, to, idt, sizeof(idt));
	ok = ok && !redis_cluster_cli(c, to, NULL, "CLUSTER SETSLOT %u IMPORTING %s", slot, idf);
	ok = ok && !redis_cluster_cli(c, from, NULL, "CLUSTER SETSLOT %u MIGRATING %s", slot, idt);
	ok = ok && migrate_keys(c, from, to, slot);
	/* The keys moved, the slot not yet: the agents are sent on with ASK meanwhile. */
	usleep(300000);
	ok = ok && settle_slot(c, to, slot);
	fprintf(stderr, "    slot %u migrated from %u to %u: %s\n", slot, c->port[from],
		c->port[to], ok ? "ok" : "FAILED");
	return ok;
}

TEST_FLAGS(sync_cluster_e2e, RL_TEST_ROOT)
{
	struct rl_flow fl[E2E_NODES] = {};
	struct cfleet *f = calloc(1, sizeof(*f));
	unsigned int slot = src_slot("e2e", E2E_SRC "/32");
	unsigned long long syncs0[E2E_NODES] = {}, syncs;
	__u64 before, passed, want, all_passed = 0;
	double t0, t, all_secs = 0;
	bool migrated = false, ok;
	char state[32], master[128], what[192], *log;
	int killed = -1, to = -1, masters = 0;

	if (!f || !redis_srv_need() || !cfleet_up(f))
		goto out;
	for (int i = 0; i < E2E_NODES; i++)
		if (!ASSERT_TRUE(cagent_start(f, i), "agent"))
			goto out;
	/* 3x the limit split evenly over the three limiters, for 10 s. */
	before = cpassed(f);
	for (int i = 0; i < E2E_NODES; i++) {
		fl[i].src = E2E_SRC;
		fl[i].count = 10000;
		fl[i].gap = "980us"; /* 1000/s: trafgen spends about 20 us per packet besides */
		fl[i].limit_s = 25;
		fl[i].via = i ? &f->pair[i] : NULL;
		if (!ASSERT_OK(rl_flow_start(&f->ns, &fl[i]), "flow"))
			goto out;
	}
	t0 = rl_test_mono();
	for (;;) {
		bool done = true, one_ended = false;

		for (int i = 0; i < E2E_NODES; i++) {
			if (fl[i].pid && !rl_flow_done(&fl[i]))
				done = false;
			else
				one_ended = true;
		}
		t = rl_test_mono() - t0;
		if (one_ended && !all_secs) {
			all_secs = t;
			all_passed = cpassed(f) - before;
		}
		if (done || t > 25)
			break;
		/* A slot of the source's bucket migrates 4 s in: MOVED and ASK under the flood. */
		if (!migrated && t > 4) {
			migrated = true;
			ASSERT_TRUE(migrate_during(&f->c, slot), "the slot migrates");
		}
		usleep(50000);
	}
	t = rl_test_mono() - t0;
	for (int i = 0; i < E2E_NODES; i++)
		rl_flow_stop(&fl[i]);
	usleep(100000);
	passed = cpassed(f) - before;
	want = (__u64)((double)E2E_RATE * t) + E2E_BURST;
	snprintf(what, sizeof(what), "%llu passed in %.2f s, r t + b = %llu (%.3f)",
		 (unsigned long long)passed, t, (unsigned long long)want,
		 (double)passed / (double)want);
	fprintf(stderr, "    with agents on the cluster: %s; per node %llu %llu %llu\n", what,
		(unsigned long long)cpassed_on(f, 0), (unsigned long long)cpassed_on(f, 1),
		(unsigned long long)cpassed_on(f, 2));
	ASSERT_LE(passed, want + want / 20, what);
	want = (__u64)((double)E2E_RATE * all_secs) + E2E_BURST;
	snprintf(what, sizeof(what),
		 "while all flows ran: %llu passed in %.2f s, r t + b = %llu (%.3f)",
		 (unsigned long long)all_passed, all_secs, (unsigned long long)want,
		 (double)all_passed / (double)want);
	fprintf(stderr, "    %s\n", what);
	ASSERT_LE(want - want / 20, all_passed, what);
	/* Every agent followed the slot. */
	for (int i = 0; i < E2E_NODES; i++) {
		log = cagent_log(f, i);
		ASSERT_CONTAINS(log, "slots moving in the cluster", "the agent followed the slot");
		free(log);
	}
	/* The keys spread over every master. */
	fprintf(stderr, "    keys per master:");
	for (int i = 0; i < f->c.n; i++) {
		long keys;

		if (!redis_cluster_is_master(&f->c, i))
			continue;
		keys = redis_cluster_dbsize(&f->c, i);
		fprintf(stderr, " %u: %ld", f->c.port[i], keys);
		ASSERT_TRUE(keys > 0, "keys on every master");
		masters++;
	}
	fprintf(stderr, "\n");
	ASSERT_EQ(masters, 3, "three masters");

	/* The master of the source's bucket killed: its replica takes over, the agents follow. */
	killed = redis_cluster_master_of(&f->c, 0, slot);
	if (!ASSERT_TRUE(killed >= 0, "the bucket's master"))
		goto out;
	for (int i = 0; i < E2E_NODES; i++)
		cstats(f, i, state, sizeof(state), master, sizeof(master), &syncs0[i]);
	redis_cluster_kill(&f->c, killed);
	t0 = rl_test_mono();
	ok = false;
	while (!ok && rl_test_mono() - t0 < 15) {
		usleep(200000);
		to = redis_cluster_master_of(&f->c, killed == 0 ? 1 : 0, slot);
		ok = to >= 0 && to != killed;
		for (int i = 0; i < E2E_NODES && ok; i++) {
			char port[16];

			snprintf(port, sizeof(port), ":%u", to >= 0 ? f->c.port[to] : 0);
			ok = cstats(f, i, state, sizeof(state), master, sizeof(master), &syncs) &&
			     !strcmp(state, "connected") && strstr(master, port) &&
			     syncs > syncs0[i] + 10;
		}
	}
	fprintf(stderr, "    master %u killed: agents syncing through %s after %.1f s (%s)\n",
		f->c.port[killed], master, rl_test_mono() - t0, state);
	ASSERT_TRUE(ok, "the agents recover, writing to the promoted replica");
	for (int i = 0; i < E2E_NODES; i++)
		ASSERT_EQ(cagent_stop(f, i, SIGTERM), 0, "clean stop");
out:
	if (f)
		cfleet_down(f);
	free(f);
}
