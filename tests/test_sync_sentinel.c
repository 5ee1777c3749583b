// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet sync through Redis Sentinel (sentinel://, user/lib/sync_sentinel.h)
 * against real servers: a master, its replica and three sentinels of the
 * test's own (tests/lib/sentinel_srv.h), tuned to fail over in about 2 s.
 *
 *	sync_sentinel_replies	the sentinels' replies apart, no server: addresses, ROLE,
 *				+switch-master payloads, accepted and refused
 *	sync_sentinel_switch	agent steps in this process (no kernel), a password on every
 *				server, the sentinels' too (asked without, then with it); a
 *				sentinel down is passed over; an unknown master name, a
 *				redis-server given as a sentinel and a replica named as
 *				master are refused with their reason; a
 *				manual failover (SENTINEL FAILOVER: the old master stays a
 *				writable master for ~10 s) is followed through +switch-master
 *				within 2 s, without a round trip in fallback
 *	sync_sentinel_failover	the issue's: three limiters, each with its agent (--fallback
 *				share), one source at several times its limit for 12 s, the first
 *				sentinel of the URL hung (SIGSTOP) throughout, the master
 *				SIGKILLed after 4 s: the fleet passes within +15% / -5% of
 *				r t + b, every agent ends on the new master (stats --json,
 *				the exporter); prints the figure and the switch time
 *	sync_sentinel_stopped_master  the master SIGSTOPped for 10 s under two agents: one
 *				falls back, resumes on the new master once the sentinels
 *				fail over, and stays there when the old one wakes; the other
 *				(5 s interval) is SIGTERMed in the middle of a round trip to
 *				the silent master and ends within its bound
 *
 * The end-to-end tests run the servers in the receiving namespace (the
 * agents reach them on its loopback), with every limiter on a veth pair of
 * its own from one sending namespace into it, as behind a load balancer.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <hiredis/hiredis.h>
#include "harness.h"
#include "metrics.h"
#include "netns.h"
#include "redis_srv.h"
#include "rl_sync.h"
#include "sentinel_srv.h"
#include "sync_agent.h"
#include "sync_sentinel.h"
#include "test.h"

#define POLICY "algo=token-bucket\nrate=1000/1\nburst=100\n"
#define MS     1000000ULL

static bool need_sentinel(void)
{
	if (sentinel_srv_available())
		return true;
	rl_test_skip("no redis-server or redis-sentinel (make deps installs them)");
	return false;
}

/* --- the replies --- */

/* @len bytes of RESP as hiredis reads them, or NULL. */
static redisReply *resp(const char *text, size_t len)
{
	redisReader *rd = redisReaderCreate();
	void *rep = NULL;

	if (!rd)
		return NULL;
	if (redisReaderFeed(rd, text, len) != REDIS_OK || redisReaderGetReply(rd, &rep) != REDIS_OK)
		rep = NULL;
	redisReaderFree(rd);
	return rep;
}

#define RESP(s) resp(s, sizeof(s) - 1)

TEST(sync_sentinel_replies)
{
	static const struct {
		const char *text;
		size_t len;
		int ret;
		const char *host;
		unsigned int port;
	} addrs[] = {
#define A(s, r, h, p) { s, sizeof(s) - 1, r, h, p }
		A("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n", 0, "127.0.0.1", 6380),
		A("*2\r\n$3\r\n::1\r\n$5\r\n65535\r\n", 0, "::1", 65535),
		A("*2\r\n$15\r\nredis-1.example\r\n$1\r\n1\r\n", 0, "redis-1.example", 1),
		A("*-1\r\n", -ENOENT, NULL, 0),
		A("$-1\r\n", -ENOENT, NULL, 0),
		A("*2\r\n$9\r\n127.0.0.1\r\n$1\r\n0\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$9\r\n127.0.0.1\r\n$5\r\n65536\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$9\r\n127.0.0.1\r\n$6\r\n006379\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$9\r\n127.0.0.1\r\n$2\r\n6a\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$9\r\n127.0.0.1\r\n:6379\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$3\r\na b\r\n$4\r\n6379\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$5\r\na/../\r\n$4\r\n6379\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$3\r\na\0b\r\n$4\r\n6379\r\n", -EPROTO, NULL, 0),
		A("*2\r\n$0\r\n\r\n$4\r\n6379\r\n", -EPROTO, NULL, 0),
		A("*3\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n$1\r\nx\r\n", -EPROTO, NULL, 0),
		A("-ERR no such thing\r\n", -EPROTO, NULL, 0),
		A(":1\r\n", -EPROTO, NULL, 0),
#undef A
	};
	static const struct {
		const char *payload, *master, *host;
		unsigned int port;
	} switches[] = {
		{ "rlt 127.0.0.1 6379 127.0.0.1 6380", "rlt", "127.0.0.1", 6380 },
		{ "m ::1 1 ::2 26379", "m", "::2", 26379 },
		{ "rlt2 127.0.0.1 6379 127.0.0.1 6380", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1 6380", "rlt2", NULL, 0 },
		{ "rl 127.0.0.1 6379 127.0.0.1 6380", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1 6380 x", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1 6380 ", "rlt", NULL, 0 },
		{ "rlt  127.0.0.1 6379 127.0.0.1 6380", "rlt", NULL, 0 },
		{ " rlt 127.0.0.1 6379 127.0.0.1 6380", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1 0", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1 99999", "rlt", NULL, 0 },
		{ "rlt 127.0.0.1 6379 127.0.0.1; 6380", "rlt", NULL, 0 },
		{ "", "rlt", NULL, 0 },
	};
	struct rl_redis_addr a;
	redisReply *rep;
	char why[128], what[160];

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		snprintf(what, sizeof(what), "address reply %zu", i);
		rep = resp(addrs[i].text, addrs[i].len);
		if (!ASSERT_TRUE(rep, what))
			continue;
		memset(&a, 0, sizeof(a));
		ASSERT_EQ(rl_sentinel_parse_addr(rep, &a, why, sizeof(why)), addrs[i].ret, what);
		if (addrs[i].host) {
			ASSERT_STREQ(a.host, addrs[i].host, what);
			ASSERT_EQ(a.port, addrs[i].port, what);
		}
		freeReplyObject(rep);
	}
	rep = RESP("*3\r\n$6\r\nmaster\r\n:3129\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n"
		   "$4\r\n3129\r\n");
	if (ASSERT_TRUE(rep, "ROLE of a master"))
		ASSERT_STREQ(rl_sentinel_parse_role(rep), "master", "a master");
	freeReplyObject(rep);
	rep = RESP("*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6379\r\n$9\r\nconnected\r\n:3129\r\n");
	if (ASSERT_TRUE(rep, "ROLE of a replica"))
		ASSERT_STREQ(rl_sentinel_parse_role(rep), "slave", "a replica");
	freeReplyObject(rep);
	rep = RESP("*0\r\n");
	if (ASSERT_TRUE(rep, "an empty array"))
		ASSERT_TRUE(!rl_sentinel_parse_role(rep), "no role in an empty array");
	freeReplyObject(rep);
	rep = RESP("*1\r\n:1\r\n");
	if (ASSERT_TRUE(rep, "a number in an array"))
		ASSERT_TRUE(!rl_sentinel_parse_role(rep), "no role in a number");
	freeReplyObject(rep);
	rep = RESP("+master\r\n");
	if (ASSERT_TRUE(rep, "a status"))
		ASSERT_TRUE(!rl_sentinel_parse_role(rep), "a status is no ROLE reply");
	freeReplyObject(rep);
	for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
		bool ok;

		memset(&a, 0, sizeof(a));
		ok = rl_sentinel_parse_switch(switches[i].payload, switches[i].master, &a);
		snprintf(what, sizeof(what), "+switch-master '%s' for '%s'", switches[i].payload,
			 switches[i].master);
		ASSERT_EQ(ok, switches[i].host != NULL, what);
		if (ok && switches[i].host) {
			ASSERT_STREQ(a.host, switches[i].host, what);
			ASSERT_EQ(a.port, switches[i].port, what);
		}
	}
}

/* --- in this process, without the kernel --- */

/* "127.0.0.1:PORT" of redis-server @i. */
static void addr_of(const struct sentinel_srv *s, int i, char *buf, size_t len)
{
	snprintf(buf, len, "127.0.0.1:%u", s->port[i]);
}

/* Open a store on @url: its return, its message in @err. */
static int try_open(const char *url, char *err, size_t errlen)
{
	struct rl_sync_store *st = NULL;
	struct rl_redis_url u;
	int ret;

	ret = rl_redis_url_parse(url, &u, err, errlen);
	if (ret)
		return ret;
	ret = rl_sync_store_open(&u, RL_SYNC_CONNECT_TIMEOUT_NS, NULL, &st, err, errlen);
	rl_sync_store_close(st);
	return ret;
}

TEST(sync_sentinel_switch)
{
	struct rl_sync_agent ag = {};
	struct rl_sync_item it;
	struct rl_sync_cfg cfg = { .group = "sw", .node = "a", .interval_ns = 100 * MS };
	struct sentinel_srv s = {};
	char err[1024], url[256], m0[32], m1[32], role[16], *out = NULL;
	int named_at = -1, moved_at = -1, ret;
	double next;

	if (!need_sentinel())
		return;
	if (!ASSERT_TRUE(sentinel_srv_start(&s, NULL, "pw-sw", true), "master, replica, sentinels"))
		goto out;
	addr_of(&s, 0, m0, sizeof(m0));
	addr_of(&s, 1, m1, sizeof(m1));
	/* What is refused, and why. */
	snprintf(url, sizeof(url), "sentinel://:pw-sw@127.0.0.1:%u/nosuch", s.sport[0]);
	ASSERT_EQ(try_open(url, err, sizeof(err)), -ENOENT, "an unknown master name");
	ASSERT_CONTAINS(err, "knows no master named 'nosuch'", "an unknown master name");
	snprintf(url, sizeof(url), "sentinel://:pw-sw@127.0.0.1:%u/rlt", s.port[1]);
	ASSERT_EQ(try_open(url, err, sizeof(err)), -EPROTO, "a redis-server given as a sentinel");
	ASSERT_CONTAINS(err, "is it a sentinel?", "a redis-server given as a sentinel");
	snprintf(url, sizeof(url), "sentinel://127.0.0.1:%u/rlt", s.sport[1]);
	ASSERT_EQ(try_open(url, err, sizeof(err)), -EACCES, "sentinels need a password");
	ASSERT_CONTAINS(err, "NOAUTH", "sentinels need a password");
	/* A sentinel down (nothing listens on its port): the next one is asked. */
	snprintf(url, sizeof(url), "sentinel://:pw-sw@127.0.0.1:%u,127.0.0.1:%u/rlt",
		 redis_srv_free_port(), s.sport[1]);
	ASSERT_OK(try_open(url, err, sizeof(err)), "a sentinel down: the next one answers");
	/* A sentinel that names the replica as a master: refused after ROLE, never written. */
	if (ASSERT_OK(sentinel_srv_cli(&s, s.sport[2], true, NULL,
				       "SENTINEL MONITOR rltr 127.0.0.1 %u 2", s.port[1]),
		      "SENTINEL MONITOR the replica") &&
	    ASSERT_OK(sentinel_srv_cli(&s, s.sport[2], true, NULL,
				       "SENTINEL SET rltr auth-pass pw-sw"),
		      "its password")) {
		snprintf(url, sizeof(url), "sentinel://:pw-sw@127.0.0.1:%u/rltr", s.sport[2]);
		ASSERT_EQ(try_open(url, err, sizeof(err)), -EAGAIN, "a replica named as master");
		ASSERT_CONTAINS(err, "is a replica", "a replica named as master");
		sentinel_srv_cli(&s, s.sport[2], true, NULL, "SENTINEL REMOVE rltr");
	}
	/* The agent: the sentinels asked with the password after NOAUTH, the master found. */
	if (!ASSERT_OK(rl_redis_url_parse(s.url, &cfg.url, err, sizeof(err)), err))
		goto out;
	ret = rl_sync_agent_init(&ag, &cfg, POLICY, err, sizeof(err));
	if (!ASSERT_OK(ret, err))
		goto out;
	snprintf(it.src, sizeof(it.src), "198.18.0.1/32");
	it.units = 1;
	ASSERT_EQ(rl_sync_agent_step(&ag, &it, 1, err, sizeof(err)), 0, "a round trip");
	ASSERT_STREQ(ag.st.master, m0, "the status names the master");
	/*
	 * A manual failover on the sentinel the store subscribed to (the first
	 * that answered): the old master stays a master, and writable, until the
	 * sentinels reconfigure it some 10 s later. Only +switch-master tells.
	 */
	if (!ASSERT_OK(sentinel_srv_cli(&s, s.sport[0], true, NULL,
					"SENTINEL FAILOVER " SENTINEL_SRV_MASTER),
		       "SENTINEL FAILOVER"))
		goto out;
	next = rl_test_mono();
	for (int step = 1; step <= 50 && moved_at < 0; step++) {
		next += 0.1;
		while (rl_test_mono() < next)
			usleep(5000);
		ret = rl_sync_agent_step(&ag, &it, 1, err, sizeof(err));
		if (!ASSERT_EQ(ret, 0, "every round trip syncs, none falls back"))
			fprintf(stderr, "    step %d: %s\n", step, err);
		if (named_at < 0 && sentinel_srv_master(&s, 0) == 1)
			named_at = step;
		if (!strcmp(ag.st.master, m1))
			moved_at = step;
	}
	fprintf(stderr,
		"    the sentinel named the new master at round trip %d, the agent wrote to it at %d\n",
		named_at, moved_at);
	if (ASSERT_TRUE(named_at > 0 && moved_at > 0, "failed over, and followed")) {
		/*
		 * A sentinel names the promoted replica as soon as it is one, and
		 * says +switch-master when the failover ends, a tick or two later
		 * (at load 17, 0.6 s later): 2 s is well before the old master is
		 * reconfigured, when the connection to it would break.
		 */
		ASSERT_LE(moved_at, named_at + 20, "followed within 2 s");
		ASSERT_TRUE(sentinel_srv_role(&s, 0, role, sizeof(role)) && !strcmp(role, "master"),
			    "the old master is still a master: only the subscription told");
	}
	ASSERT_EQ(ag.st.fallback_intervals_total, 0, "no interval in fallback");
	ASSERT_EQ(ag.st.errors_total, 0, "no failed round trip");
	if (ASSERT_OK(sentinel_srv_cli(&s, s.port[1], true, &out, "HEXISTS rl:{sw}:nodes a"),
		      "HEXISTS"))
		ASSERT_STREQ(out, "1\n", "the new master has the node");
out:
	free(out);
	rl_sync_agent_fini(&ag);
	sentinel_srv_stop(&s);
}

/* --- end to end: limiters, agents and floods in namespaces --- */

#define E2E_RATE  1000ULL
#define E2E_BURST 100ULL
#define NLIM	  3
#define SRC	  "198.18.3.7" /* off the receiving subnet: its kernel sends nothing back */

struct sfleet {
	struct rl_ns ns; /* the first pair, and both namespaces */
	struct rl_ns pair[NLIM]; /* each limiter's pair (names only: ns owns the namespaces) */
	int n;
	struct sentinel_srv srv;
	pid_t agent[NLIM];
	char log[NLIM][64];
};

/* Another pair from ns's sending namespace into its receiving one: @p's names. */
static bool pair_add(struct sfleet *f, int k)
{
	struct rl_ns *p = &f->pair[k];
	char *out = NULL, *m;
	bool ok;

	*p = f->ns;
	p->up = false;
	memset(p->flows, 0, sizeof(p->flows));
	snprintf(p->tx_if, sizeof(p->tx_if), "%.13s%c", f->ns.tx_if, 'a' + k);
	snprintf(p->rx_if, sizeof(p->rx_if), "%.13s%c", f->ns.rx_if, 'a' + k);
	if (!ASSERT_OK(
		    rl_sh(NULL,
			  "set -e; ip link add %1$s netns %2$s type veth peer name %3$s netns "
			  "%4$s; ip netns exec %2$s sysctl -qw net.ipv6.conf.%1$s.disable_ipv6=1;"
			  " ip -n %2$s link set %1$s up; ip -n %4$s link set %3$s up",
			  p->tx_if, f->ns.tx, p->rx_if, f->ns.rx),
		    "another veth pair"))
		return false;
	ok = !rl_sh(&out, "ip -n %s -o link show dev %s", f->ns.rx, p->rx_if);
	m = out ? strstr(out, "link/ether ") : NULL;
	ok = ok && m && sscanf(m, "link/ether %17s", p->rx_mac) == 1;
	free(out);
	return ASSERT_TRUE(ok, "its MAC address");
}

/* Namespaces, @n limiters (--rate 1000 --burst 100), and the servers in the receiving namespace. */
static bool sfleet_up(struct sfleet *f, int n, const char *password)
{
	char args[160];

	memset(f, 0, sizeof(*f));
	f->n = n;
	if (!ASSERT_OK(rl_ns_create(&f->ns), "namespace pair"))
		return false;
	f->pair[0] = f->ns;
	f->pair[0].up = false;
	/* First, so that the sentinels meet while the limiters are attached. */
	if (!ASSERT_TRUE(sentinel_srv_start(&f->srv, f->ns.rx, password, false),
			 "master, replica, sentinels"))
		return false;
	for (int k = 1; k < n; k++)
		if (!pair_add(f, k))
			return false;
	for (int k = 0; k < n; k++) {
		snprintf(args, sizeof(args), "attach %s --rate %llu --burst %llu", f->pair[k].rx_if,
			 E2E_RATE, E2E_BURST);
		if (!rl_ns_cli_ok(&f->ns, "attach", args))
			return false;
	}
	return true;
}

static void agent_kill(struct sfleet *f, int k)
{
	int st;

	rl_proc_stop(&f->agent[k], SIGKILL, 0, &st);
}

static void sfleet_down(struct sfleet *f)
{
	for (int k = 0; k < f->n; k++) {
		int st;

		if (f->agent[k] > 0)
			rl_proc_stop(&f->agent[k], SIGTERM, 3000, &st);
		if (f->log[k][0])
			unlink(f->log[k]);
	}
	sentinel_srv_stop(&f->srv);
	for (int k = 1; k < f->n; k++)
		if (f->pair[k].rx_if[0] && f->ns.up)
			rl_ns_cli(&f->ns, NULL, NULL, "detach %s 2>/dev/null", f->pair[k].rx_if);
	rl_ns_destroy(&f->ns);
}

/* Agent @k's standard error so far (malloc'd), or NULL; read here, not by a process per look. */
static char *agent_log(struct sfleet *f, int k)
{
	FILE *in = fopen(f->log[k], "r");
	size_t n = 0, cap = 4096;
	char *out = in ? malloc(cap) : NULL;

	while (out) {
		size_t got = fread(out + n, 1, cap - n - 1, in);

		n += got;
		if (n + 1 < cap)
			break;
		cap *= 2;
		out = realloc(out, cap);
	}
	if (out)
		out[n] = '\0';
	if (in)
		fclose(in);
	return out;
}

/*
 * Start every agent at once, agent k with options @extra[k]; true once each
 * says it runs. At most
 * 40 s: an agent turns counting on under the host lock, which another
 * command may hold for up to 30 s (the CLI's own bound) on a busy machine.
 */
static bool agents_start(struct sfleet *f, const char *const *extra)
{
	char cmd[1024];
	bool up[NLIM] = {};
	int left = f->n;

	for (int k = 0; k < f->n; k++) {
		pid_t pid;

		snprintf(f->log[k], sizeof(f->log[k]), "/tmp/rlt-%d-sentinel%d.log", getpid(), k);
		snprintf(cmd, sizeof(cmd),
			 "exec nsenter --net=/run/netns/%s %s/xdp-ratelimit sync %s --redis '%s' "
			 "--group sn --node n%d %s 2>>%s </dev/null",
			 f->ns.rx, rl_build_dir, f->pair[k].rx_if, f->srv.url, k, extra[k],
			 f->log[k]);
		pid = fork();
		if (pid < 0)
			return false;
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		f->agent[k] = pid;
	}
	for (double t0 = rl_test_mono(); left && rl_test_mono() - t0 < 40; usleep(20000)) {
		for (int k = 0; k < f->n; k++) {
			char *log;
			int st;

			if (up[k])
				continue;
			log = agent_log(f, k);
			if (log && strstr(log, "node(s) live")) {
				up[k] = true;
				left--;
			}
			free(log);
			if (!up[k] && waitpid(f->agent[k], &st, WNOHANG) == f->agent[k]) {
				f->agent[k] = 0;
				log = agent_log(f, k);
				fprintf(stderr, "    agent %d exited:\n%s", k, log ? log : "");
				free(log);
				return false;
			}
		}
	}
	for (int k = 0; k < f->n && left; k++) {
		char *log = up[k] ? NULL : agent_log(f, k);

		if (!up[k])
			fprintf(stderr, "    agent %d did not start within 40 s:\n%s", k,
				log ? log : "");
		free(log);
	}
	return !left;
}

/* Agent @k's status, read from the limiter's pinned map: 0 or -errno. */
static int status_of(struct sfleet *f, int k, struct rl_sync_status *st)
{
	char path[512], buf[RL_SYNC_STATUS_SIZE] = {};
	__u32 zero = 0;
	int fd, ret = 0;

	if (rl_ns_pin_dir(f->ns.rx, f->pair[k].rx_if, path, sizeof(path)))
		return -ENOENT;
	strncat(path, "/rl_sync_status", sizeof(path) - strlen(path) - 1);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_lookup_elem(fd, &zero, buf))
		ret = -errno;
	close(fd);
	memcpy(st, buf, sizeof(*st));
	return ret;
}

/* The source's passes on limiter @k: its IPv4 frames less the limited ones. */
static __u64 passed_on(struct sfleet *f, int k)
{
	struct rl_counters c;

	if (rl_ns_counters(&f->pair[k], &c))
		return 0;
	return c.ipv4 - c.limited;
}

static __u64 passed_total(struct sfleet *f)
{
	__u64 n = 0;

	for (int k = 0; k < f->n; k++)
		n += passed_on(f, k);
	return n;
}

/* The source's frames that reached the limiters, passed or not. */
static __u64 offered_total(struct sfleet *f)
{
	struct rl_counters c;
	__u64 n = 0;

	for (int k = 0; k < f->n; k++)
		if (!rl_ns_counters(&f->pair[k], &c))
			n += c.ipv4;
	return n;
}

/* stats IFACE --json of limiter @k: the "master" and "state" of its agent, into @master, @state. */
static void stats_master(struct sfleet *f, int k, char *master, size_t mlen, char *state,
			 size_t slen)
{
	char *out = NULL, *p, *sync;

	snprintf(master, mlen, "?");
	snprintf(state, slen, "?");
	if (rl_ns_cli(&f->ns, &out, NULL, "stats %s --json", f->pair[k].rx_if) || !out)
		goto out;
	sync = strstr(out, "\"sync\":");
	if (sync && (p = strstr(sync, "\"master\":\"")))
		snprintf(master, mlen, "%.*s", (int)strcspn(p + 10, "\""), p + 10);
	if (sync && (p = strstr(sync, "\"state\":\"")))
		snprintf(state, slen, "%.*s", (int)strcspn(p + 9, "\""), p + 9);
out:
	free(out);
}

/* Does limiter @k's xdp_ratelimit_sync_state_info in the exporter's @text say master @want? */
static bool exporter_master(struct sfleet *f, int k, const char *text, const char *want)
{
	char label[96];
	const char *p, *m;

	snprintf(label, sizeof(label), "xdp_ratelimit_sync_state_info{iface=\"%s\"",
		 f->pair[k].rx_if);
	p = text ? strstr(text, label) : NULL;
	snprintf(label, sizeof(label), "master=\"%s\"", want);
	m = p ? strstr(p, label) : NULL;
	return m && m < strchr(p, '\n');
}

/*
 * The test. Three limiters with agents (--interval 100ms, --fallback
 * share), one source sent to each for 12 s, stopped by the clock: trafgen
 * paced at 2000 pps each, 6x the limit of 1000/s in all, so that under load,
 * when trafgen keeps half that pace and stalls now and then, the source still
 * offers several times its limit throughout (paced at 1000 pps each, a loaded
 * machine let it offer less than the limit for seconds, and the fleet passed
 * 0.83 of r t + b through no fault of the limiters).
 * The first sentinel of the URL is hung (SIGSTOP) from the start: every
 * agent finds the master through the others, each try costing the hung one
 * its share of the bound. After 4 s the master is SIGKILLed: the agents fall
 * back (each host about a third of the limit), the two sentinels left fail
 * over, the agents ask them again until they name the replica. The switch
 * time is from the kill to the first round trip of the last agent on the new
 * master; the figure is what all limiters passed / (r t + b).
 */
TEST_FLAGS(sync_sentinel_failover, RL_TEST_ROOT)
{
	struct rl_flow fl[NLIM] = {};
	struct sfleet f = {};
	double t0, t_kill = 0, t_named = 0, t_all = 0, dur, switched[NLIM] = {};
	struct timespec rt_kill = {};
	char what[256], want[32], old[32], moved[96], master[64], state[32], *log, *text = NULL;
	__u64 passed, base, p0, o0, offered, syncs_at_kill[NLIM] = {};
	bool killed = false, flows_done;
	size_t len;

	if (!need_sentinel())
		return;
	if (!sfleet_up(&f, NLIM, NULL))
		goto out;
	addr_of(&f.srv, 0, old, sizeof(old));
	addr_of(&f.srv, 1, want, sizeof(want));
	snprintf(moved, sizeof(moved), "now writing to %s (was %s)", want, old);
	kill(f.srv.spid[0], SIGSTOP);
	f.srv.paused[0] = true;
	if (!ASSERT_TRUE(
		    agents_start(&f, (const char *const[]){ "--interval 100ms --fallback share",
							    "--interval 100ms --fallback share",
							    "--interval 100ms --fallback share" }),
		    "agents up through the sentinels left"))
		goto out;
	p0 = passed_total(&f);
	o0 = offered_total(&f);
	for (int k = 0; k < NLIM; k++) {
		fl[k].src = SRC;
		fl[k].count = 2000 * 15; /* more than 12 s can send */
		/* trafgen spends about 20 us per packet besides the gap (netns.c). */
		fl[k].gap = "480us";
		fl[k].limit_s = 30;
		fl[k].via = k ? &f.pair[k] : NULL;
		if (!ASSERT_OK(rl_flow_start(&f.ns, &fl[k]), "flow"))
			goto out;
	}
	t0 = rl_test_mono();
	do {
		double t = rl_test_mono() - t0;

		if (!killed && t >= 4) {
			struct rl_sync_status st;

			/* Failover needs the sentinels left to know the replica and each other. */
			ASSERT_TRUE(sentinel_srv_ready(&f.srv, 5), "the sentinels can fail over");
			ASSERT_EQ(sentinel_srv_master(&f.srv, 1), 0,
				  "no failover before the kill (the first master still named)");
			for (int k = 0; k < NLIM; k++)
				if (!status_of(&f, k, &st))
					syncs_at_kill[k] = st.syncs_total;
			sentinel_srv_kill(&f.srv.pid[0]);
			t_kill = rl_test_mono();
			clock_gettime(CLOCK_REALTIME, &rt_kill);
			killed = true;
		}
		if (killed && !t_all) {
			int n = 0;

			for (int k = 0; k < NLIM; k++) {
				struct rl_sync_status st;

				if (!switched[k] && !status_of(&f, k, &st) &&
				    st.state == RL_SYNC_CONNECTED && !strcmp(st.master, want) &&
				    st.syncs_total > syncs_at_kill[k])
					switched[k] = rl_test_mono() - t_kill;
				n += switched[k] > 0;
			}
			if (n == NLIM)
				t_all = rl_test_mono() - t_kill;
		}
		flows_done = true;
		for (int k = 0; k < NLIM; k++)
			flows_done &= rl_flow_done(&fl[k]);
		usleep(killed && !t_all ? 20000 : 50000);
	} while (!flows_done && rl_test_mono() - t0 < 12);
	for (int k = 0; k < NLIM; k++)
		rl_flow_stop(&fl[k]);
	dur = rl_test_mono() - t0;
	if (killed && sentinel_srv_named_at(&f.srv) > 0)
		t_named = sentinel_srv_named_at(&f.srv) - (double)rt_kill.tv_sec -
			  (double)rt_kill.tv_nsec / 1e9;
	usleep(100000); /* the last frames through the receive path */
	passed = passed_total(&f) - p0;
	offered = offered_total(&f) - o0;
	base = (__u64)((double)E2E_RATE * dur) + E2E_BURST;
	fprintf(stderr, "    offered %.2fx the limit; ", (double)offered / (double)base);
	snprintf(what, sizeof(what),
		 "%llu passed in %.2f s, r t + b = %llu: %.3f; the sentinels named the new master "
		 "%.2f s after the kill, the last agent wrote to it %.2f s after (agents %.2f %.2f "
		 "%.2f)",
		 (unsigned long long)passed, dur, (unsigned long long)base,
		 (double)passed / (double)base, t_named, t_all, switched[0], switched[1],
		 switched[2]);
	fprintf(stderr, "%s\n", what);
	fprintf(stderr, "    per limiter: %llu %llu %llu\n", (unsigned long long)passed_on(&f, 0),
		(unsigned long long)passed_on(&f, 1), (unsigned long long)passed_on(&f, 2));
	/* The premise: trafgen, under the machine's load, did offer a flood. */
	ASSERT_LE(2 * base, offered,
		  "the source offered at least 2x its limit (else re-run alone)");
	ASSERT_TRUE(killed, "the master was killed");
	ASSERT_TRUE(t_all > 0, "every agent writes to the new master");
	ASSERT_LE(passed * 100, base * 115, what);
	ASSERT_LE(base * 95, passed * 100, what);
	if (rl_metrics_render(&text, &len))
		text = NULL;
	for (int k = 0; k < NLIM; k++) {
		snprintf(what, sizeof(what), "agent %d", k);
		stats_master(&f, k, master, sizeof(master), state, sizeof(state));
		ASSERT_STREQ(master, want, "stats --json: the new master");
		ASSERT_STREQ(state, "connected", "stats --json: syncing");
		ASSERT_TRUE(exporter_master(&f, k, text, want), "the exporter's master label");
		log = agent_log(&f, k);
		ASSERT_CONTAINS(log, "falling back to share", what);
		ASSERT_CONTAINS(log, moved, what);
		free(log);
	}
	for (int k = 0; k < NLIM; k++) {
		int st = -1;

		ASSERT_OK(rl_proc_stop(&f.agent[k], SIGTERM, 3000, &st), "stopped by SIGTERM");
		ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st), "exit status 0");
	}
out:
	free(text);
	for (int k = 0; k < NLIM; k++)
		rl_flow_stop(&fl[k]);
	for (int k = 0; k < NLIM; k++)
		if (f.agent[k] > 0)
			agent_kill(&f, k);
	sfleet_down(&f);
}

/*
 * The master SIGSTOPped for 10 s under two agents (fallback local, a password
 * on the redis-servers): every round trip and every try to reconnect runs
 * into the silent master and ends at its bound. Agent 0 (--interval 100ms)
 * falls back within an interval or two, the sentinels fail over, and it
 * resumes on the new master; when the old master wakes (still a master until
 * the sentinels reconfigure it), it stays on the new one. Agent 1 (--interval
 * 5s, so that each wait for Redis may last 5 s) is SIGTERMed in the middle of
 * its first round trip to the silent master: it must end within 3 s, where
 * without the stop check it would wait out the rest of its 5 s (the exit also
 * turns counting off, under the host lock other tests may hold).
 */
TEST_FLAGS(sync_sentinel_stopped_master, RL_TEST_ROOT)
{
	struct sfleet f = {};
	struct rl_sync_status st;
	char want[32], old[32], what[160];
	double t0 = 0, t_fb = 0, t_back = 0, t_term = -1, t;
	bool stopped = false, stayed = true;
	__u64 syncs = 0, due = 0;
	int wst = -1;

	if (!need_sentinel())
		return;
	if (!sfleet_up(&f, 2, "pw-stop"))
		goto out;
	addr_of(&f.srv, 0, old, sizeof(old));
	addr_of(&f.srv, 1, want, sizeof(want));
	if (!ASSERT_TRUE(
		    agents_start(&f, (const char *const[]){ "--interval 100ms", "--interval 5s" }),
		    "agents up"))
		goto out;
	for (double w = rl_test_mono(); rl_test_mono() - w < 3; usleep(20000))
		if (!status_of(&f, 0, &st) && st.state == RL_SYNC_CONNECTED &&
		    !strcmp(st.master, old))
			break;
	if (!ASSERT_STREQ(st.master, old, "the agent writes to the first master"))
		goto out;
	/* Mostly met already, while the agents started: the failover needs it. */
	if (!ASSERT_TRUE(sentinel_srv_ready(&f.srv, 10), "the sentinels can fail over") ||
	    !ASSERT_EQ(sentinel_srv_master(&f.srv, 0), 0, "no failover before the stop"))
		goto out;
	/* Agent 1's next round trip: its last one (CLOCK_REALTIME) and an interval. */
	if (!ASSERT_OK(status_of(&f, 1, &st), "agent 1's status"))
		goto out;
	due = st.last_sync_ns + st.interval_ns;
	t0 = rl_test_mono();
	kill(f.srv.pid[0], SIGSTOP);
	stopped = true;
	while ((t = rl_test_mono() - t0) < 10) {
		struct timespec now;

		if (!t_fb && !status_of(&f, 0, &st) && st.state == RL_SYNC_FALLBACK_LOCAL)
			t_fb = t;
		/* 0.5 s into its round trip to the silent master: SIGTERM. */
		clock_gettime(CLOCK_REALTIME, &now);
		if (t_term < 0 &&
		    (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec > due + 500 * MS) {
			double s0 = rl_test_mono();

			ASSERT_TRUE(!status_of(&f, 1, &st) && st.state == RL_SYNC_CONNECTED,
				    "agent 1 has not finished that round trip");
			ASSERT_OK(rl_proc_stop(&f.agent[1], SIGTERM, 6000, &wst),
				  "SIGTERM stops the agent");
			t_term = rl_test_mono() - s0;
			ASSERT_TRUE(WIFEXITED(wst) && !WEXITSTATUS(wst), "exit status 0");
		}
		if (!t_back && !status_of(&f, 0, &st) && st.state == RL_SYNC_CONNECTED &&
		    !strcmp(st.master, want))
			t_back = t;
		usleep(50000);
	}
	/* The old master wakes, still a master: the agent stays on the new one. */
	kill(f.srv.pid[0], SIGCONT);
	stopped = false;
	if (!status_of(&f, 0, &st))
		syncs = st.syncs_total;
	for (double w = rl_test_mono(); rl_test_mono() - w < 1.0; usleep(50000))
		if (status_of(&f, 0, &st) || st.state != RL_SYNC_CONNECTED ||
		    strcmp(st.master, want))
			stayed = false;
	fprintf(stderr,
		"    fell back %.2f s after the stop, resumed on the new master %.2f s after it; "
		"SIGTERM in a round trip to the silent master took %.3f s\n",
		t_fb, t_back, t_term);
	ASSERT_TRUE(t_fb > 0 && t_fb < 1, "fell back within 1 s");
	snprintf(what, sizeof(what), "SIGTERM ended the agent in %.3f s", t_term);
	ASSERT_TRUE(t_term >= 0 && t_term < 3, what);
	ASSERT_TRUE(t_back > t_fb, "resumed on the new master while the old one was stopped");
	ASSERT_TRUE(stayed, "stays on the new master when the old one wakes");
	ASSERT_TRUE(!status_of(&f, 0, &st) && st.syncs_total > syncs, "and syncs there");
	ASSERT_OK(rl_proc_stop(&f.agent[0], SIGTERM, 3000, &wst), "stopped by SIGTERM");
out:
	if (stopped)
		kill(f.srv.pid[0], SIGCONT);
	for (int k = 0; k < NLIM; k++)
		if (f.agent[k] > 0)
			agent_kill(&f, k);
	sfleet_down(&f);
}
