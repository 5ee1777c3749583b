// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The sync agent against a broken or hostile store: a small RESP server of
 * the test's own (a thread, on loopback TCP and on a unix socket) that
 * passes the agent's handshake (SCRIPT LOAD, the first EVALSHA of the group's
 * script) and then misbehaves; and a real redis-server whose keys someone
 * else writes.
 *	sync_hostile_trickle	a huge bulk reply, 1 byte per 50 ms: fallback within the
 *				interval; the stop check ends a 5 s round in a few ms
 *	sync_hostile_huge	a 1 GB reply sent fast: refused past the reply's cap, the
 *				process's peak RSS grows by less than 8 MB
 *	sync_hostile_double	a reply sent twice, in one write or 30 ms apart: nothing of
 *				the extra one is charged, the connection is dropped
 *	sync_hostile_cli	the command against the trickle: stats says fallback-local,
 *				and SIGTERM ends it within 1 s
 *	sync_charge_refused	an HINCRBY of 10^12 on the group's total: refused and
 *				counted, the next honest charge goes through
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "netns.h"
#include "redis_srv.h"
#include "sync_agent.h"
#include "test.h"

#define POLICY "algo=token-bucket\nrate=1000/1\nburst=100\n"
#define MS     1000000ULL

enum hmode {
	H_TRICKLE, /* "$100000000\r\n", then a byte every 50 ms */
	H_HUGE, /* "$1000000000\r\n", then as fast as the agent reads */
	H_DOUBLE, /* a reply charging 550 units, twice in one write */
	H_DOUBLE_LATE, /* the same, the second copy 30 ms later */
};

struct hostile {
	int lfd[2]; /* TCP, unix */
	unsigned int port;
	char dir[64], sock[96], url_tcp[64], url_unix[128];
	enum hmode mode;
	int from; /* the EVALSHA of a connection from which it misbehaves (1: the first) */
	atomic_int stop;
	atomic_int accepted;
	/* A reply held back, to go out with the next write (the group's with a bucket's). */
	char held[64];
	atomic_llong sent;
	pthread_t th;
	bool running;
};

static int put_all(struct hostile *h, int fd, const char *buf, size_t len);

/* Write all of @buf (after a reply held back) unless stopped or the peer is gone: 0, or -1. */
static int put(struct hostile *h, int fd, const char *buf, size_t len)
{
	char both[256];

	if (h->held[0] && strlen(h->held) + len < sizeof(both)) {
		snprintf(both, sizeof(both), "%s%.*s", h->held, (int)len, buf);
		h->held[0] = '\0';
		return put_all(h, fd, both, strlen(both));
	}
	if (h->held[0]) {
		int ret = put_all(h, fd, h->held, strlen(h->held));

		h->held[0] = '\0';
		if (ret)
			return ret;
	}
	return put_all(h, fd, buf, len);
}

static int put_all(struct hostile *h, int fd, const char *buf, size_t len)
{
	while (len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t n;

		if (atomic_load(&h->stop))
			return -1;
		if (poll(&p, 1, 50) <= 0)
			continue;
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN)
			return -1;
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			atomic_fetch_add(&h->sent, n);
		}
	}
	return 0;
}

static void nap(struct hostile *h, int ms)
{
	for (int i = 0; i < ms / 10 && !atomic_load(&h->stop); i++)
		usleep(10000);
}

/*
 * The replies of the scripts (sync_redis.c): the group's (two live nodes,
 * policies agree), and a bucket's with nothing in it, or charging its first
 * source 550 units.
 */
#define GROUP_REPLY  "*4\r\n:0\r\n:2\r\n$0\r\n\r\n$0\r\n\r\n"
#define BUCKET_REPLY "*4\r\n:0\r\n$1\r\nx\r\n:0\r\n:0\r\n"
#define BUCKET_550   "*6\r\n:0\r\n$1\r\nx\r\n:0\r\n:0\r\n:0\r\n:550\r\n"

/*
 * The misbehaviour of @h->mode, on a connection whose agent asked an EVALSHA
 * (of the group's script if @group, else of a bucket's). A reply doubled is
 * a bucket's: the group's is answered once.
 */
static int misbehave(struct hostile *h, int fd, bool group)
{
	static const char twice[] = BUCKET_550;
	static char chunk[65536];

	/*
	 * The group's reply goes out with the bucket's, in one write, as a
	 * server answering a pipeline does: the 30 ms of H_DOUBLE_LATE are then
	 * after the whole answer, not partly spent in the agent's wakeups.
	 */
	if (group && (h->mode == H_DOUBLE || h->mode == H_DOUBLE_LATE)) {
		snprintf(h->held, sizeof(h->held), "%s", GROUP_REPLY);
		return 0;
	}
	switch (h->mode) {
	case H_TRICKLE:
		if (put(h, fd, "$100000000\r\n", 12))
			return -1;
		for (;;) {
			nap(h, 50);
			if (put(h, fd, "x", 1))
				return -1;
		}
	case H_HUGE:
		memset(chunk, 'x', sizeof(chunk));
		if (put(h, fd, "$1000000000\r\n", 13))
			return -1;
		for (int i = 0; i < 1000000000 / (int)sizeof(chunk); i++)
			if (put(h, fd, chunk, sizeof(chunk)))
				return -1;
		return 0;
	case H_DOUBLE: {
		char buf[2 * sizeof(twice)];

		snprintf(buf, sizeof(buf), "%s%s", twice, twice);
		return put(h, fd, buf, strlen(buf));
	}
	case H_DOUBLE_LATE:
		if (put(h, fd, twice, strlen(twice)))
			return -1;
		nap(h, 30);
		return put(h, fd, twice, strlen(twice));
	}
	return -1;
}

/*
 * The first command of @buf (@len bytes) if whole: its length, its name in
 * @name, its third word as a number in *@third (EVALSHA's number of keys);
 * 0 if incomplete, -1 if not RESP.
 */
static long one_command(const char *buf, size_t len, char *name, size_t nlen, long *third)
{
	const char *p = buf, *end = buf + len;
	long n, l;
	char *e;

	if (len < 4 || *p != '*' || !memchr(p, '\n', len))
		return len && *p != '*' ? -1 : 0;
	n = strtol(p + 1, &e, 10);
	p = strchr(p, '\n') + 1;
	for (long i = 0; i < n; i++) {
		if (p >= end || !memchr(p, '\n', (size_t)(end - p)))
			return 0;
		if (*p != '$')
			return -1;
		l = strtol(p + 1, &e, 10);
		p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
		if (end - p < l + 2)
			return 0;
		if (!i)
			snprintf(name, nlen, "%.*s", (int)(l < (long)nlen - 1 ? l : (long)nlen - 1),
				 p);
		if (i == 2)
			*third = strtol(p, NULL, 10);
		p += l + 2;
	}
	return p - buf;
}

/* One connection, until the agent closes it or the test stops. */
static void serve(struct hostile *h, int fd)
{
	static char buf[1 << 20];
	size_t len = 0;
	int evals = 0;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (!atomic_load(&h->stop)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char name[16];
		long used, keys = 0;
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (n <= 0)
			return;
		len += (size_t)n;
		while ((used = one_command(buf, len, name, sizeof(name), &keys)) > 0) {
			int ret = 0;

			memmove(buf, buf + used, len - (size_t)used);
			len -= (size_t)used;
			if (!strcasecmp(name, "SCRIPT"))
				ret = put(h, fd,
					  "$40\r\n0123456789012345678901234567890123456789\r\n",
					  47);
			else if (!strcasecmp(name, "EVALSHA") && ++evals < h->from)
				ret = keys == 2 ? put(h, fd, GROUP_REPLY, strlen(GROUP_REPLY)) :
						  put(h, fd, BUCKET_REPLY, strlen(BUCKET_REPLY));
			else if (!strcasecmp(name, "EVALSHA"))
				ret = misbehave(h, fd, keys == 2);
			else
				ret = put(h, fd, "+OK\r\n", 5);
			if (ret)
				return;
		}
		if (used < 0)
			return;
	}
}

static void *hostile_main(void *arg)
{
	struct hostile *h = arg;

	while (!atomic_load(&h->stop)) {
		struct pollfd p[2] = { { .fd = h->lfd[0], .events = POLLIN },
				       { .fd = h->lfd[1], .events = POLLIN } };
		int fd;

		if (poll(p, 2, 50) <= 0)
			continue;
		fd = accept(p[0].revents ? h->lfd[0] : h->lfd[1], NULL, NULL);
		if (fd < 0)
			continue;
		atomic_fetch_add(&h->accepted, 1);
		serve(h, fd);
		close(fd);
	}
	return NULL;
}

static bool hostile_start(struct hostile *h, enum hmode mode, int from)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(a);

	memset(h, 0, sizeof(*h));
	h->lfd[0] = h->lfd[1] = -1;
	h->mode = mode;
	h->from = from;
	snprintf(h->dir, sizeof(h->dir), "/tmp/rl-hostile-XXXXXX");
	if (!mkdtemp(h->dir)) {
		h->dir[0] = '\0';
		return false;
	}
	snprintf(h->sock, sizeof(h->sock), "%s/h.sock", h->dir);
	snprintf(u.sun_path, sizeof(u.sun_path), "%s", h->sock);
	h->lfd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	h->lfd[1] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->lfd[0] < 0 || h->lfd[1] < 0 || bind(h->lfd[0], (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(h->lfd[0], (struct sockaddr *)&a, &len) || listen(h->lfd[0], 8) ||
	    bind(h->lfd[1], (struct sockaddr *)&u, sizeof(u)) || listen(h->lfd[1], 8))
		return false;
	h->port = ntohs(a.sin_port);
	snprintf(h->url_tcp, sizeof(h->url_tcp), "redis://127.0.0.1:%u", h->port);
	snprintf(h->url_unix, sizeof(h->url_unix), "unix://%s", h->sock);
	if (pthread_create(&h->th, NULL, hostile_main, h))
		return false;
	h->running = true;
	return true;
}

static void hostile_stop(struct hostile *h)
{
	atomic_store(&h->stop, 1);
	if (h->running)
		pthread_join(h->th, NULL);
	h->running = false;
	for (int i = 0; i < 2; i++)
		if (h->lfd[i] >= 0)
			close(h->lfd[i]);
	h->lfd[0] = h->lfd[1] = -1;
	if (h->sock[0])
		unlink(h->sock);
	if (h->dir[0])
		rmdir(h->dir);
	h->dir[0] = h->sock[0] = '\0';
}

static void cfg_url(struct rl_sync_cfg *cfg, const char *url, __u64 interval_ns)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	rl_redis_url_parse(url, &cfg->url, err, sizeof(err));
	cfg->group = "h";
	cfg->node = "a";
	cfg->interval_ns = interval_ns;
	cfg->fallback = RL_SYNC_FB_LOCAL;
}

static void item(struct rl_sync_item *it, const char *src, __u64 units)
{
	memset(it, 0, sizeof(*it));
	snprintf(it->src, sizeof(it->src), "%s", src);
	it->units = units;
	it->remote = ~0ULL;
}

static volatile sig_atomic_t stop_flag;

static bool flag_stop(void *ctx)
{
	(void)ctx;
	return stop_flag;
}

static void *raise_stop(void *arg)
{
	usleep((useconds_t)(long)arg);
	stop_flag = 1;
	return NULL;
}

TEST(sync_hostile_trickle)
{
	struct rl_sync_agent a = {}, b = {};
	struct rl_sync_cfg ca, cb;
	struct rl_sync_item it[1];
	struct hostile h;
	pthread_t th;
	char err[512];
	double t0, t;

	if (!ASSERT_TRUE(hostile_start(&h, H_TRICKLE, 2), "hostile server"))
		goto out;
	cfg_url(&ca, h.url_tcp, 100 * MS);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err))
		goto out;
	/* The reply never ends: the round trip gives up at its bound, the interval. */
	item(&it[0], "198.18.0.1/32", 5);
	t0 = rl_test_mono();
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 1, "fallback");
	t = rl_test_mono() - t0;
	fprintf(stderr, "    trickle: fallback after %.3f s\n", t);
	ASSERT_TRUE(t >= 0.09 && t < 0.3, "within the interval");
	ASSERT_EQ(a.st.state, RL_SYNC_FALLBACK_LOCAL, "fallback-local");
	ASSERT_EQ(it[0].remote, 0, "nothing charged");
	ASSERT_EQ(a.st.errors_total, 1, "counted");
	ASSERT_TRUE(!a.r, "connection dropped");
	/* A 5 s interval (and bound): the stop check ends the round trip within its poll slice. */
	cfg_url(&cb, h.url_tcp, 5000 * MS);
	cb.stop.fn = flag_stop;
	stop_flag = 0;
	h.from = 1;
	if (!ASSERT_OK(rl_sync_agent_connect(&b, &cb, err, sizeof(err)), err))
		goto out;
	pthread_create(&th, NULL, raise_stop, (void *)300000L);
	t0 = rl_test_mono();
	ASSERT_EQ(rl_sync_agent_start(&b, POLICY, err, sizeof(err)), -EINTR, "stopped");
	t = rl_test_mono() - t0;
	pthread_join(th, NULL);
	fprintf(stderr, "    trickle: stopped %.3f s after the stop was asked\n", t - 0.3);
	ASSERT_TRUE(t < 0.3 + 0.1, "within 100 ms of the stop");
out:
	rl_sync_agent_fini(&a);
	rl_sync_agent_fini(&b);
	hostile_stop(&h);
}

/* A line of /proc/self/status, in kB. */
static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

TEST(sync_hostile_huge)
{
	struct rl_sync_agent a = {};
	struct rl_sync_item it[1];
	struct rl_sync_cfg ca;
	struct hostile h;
	char err[512];
	long before, peak;
	int fd;

	if (!ASSERT_TRUE(hostile_start(&h, H_HUGE, 2), "hostile server"))
		goto out;
	cfg_url(&ca, h.url_tcp, 1000 * MS);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err))
		goto out;
	/* The peak RSS from here on (5 to clear_refs resets VmHWM). */
	fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd >= 0) {
		ASSERT_EQ(write(fd, "5", 1), 1, "reset the peak RSS");
		close(fd);
	}
	before = status_kb("VmRSS:");
	item(&it[0], "198.18.0.1/32", 5);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 1, "fallback");
	peak = status_kb("VmHWM:");
	fprintf(stderr, "    huge: RSS %ld kB before, peak %ld kB; server sent %lld bytes\n",
		before, peak, (long long)atomic_load(&h.sent));
	ASSERT_TRUE(before > 0 && peak > 0, "RSS read");
	ASSERT_LE(peak - before, 8 * 1024, "peak RSS grew by less than 8 MB");
	ASSERT_EQ(a.st.state, RL_SYNC_FALLBACK_LOCAL, "fallback-local");
	ASSERT_TRUE(!a.r, "connection dropped");
out:
	rl_sync_agent_fini(&a);
	hostile_stop(&h);
}

TEST(sync_hostile_double)
{
	struct rl_sync_agent a = {};
	struct rl_sync_item it[1];
	struct rl_sync_cfg ca;
	struct hostile h;
	char err[512];
	int acc;

	if (!ASSERT_TRUE(hostile_start(&h, H_DOUBLE, 2), "hostile server"))
		goto out;
	cfg_url(&ca, h.url_tcp, 100 * MS);
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err))
		goto out;
	/* Two replies to one request, in one write: refused whole, nothing charged. */
	item(&it[0], "198.18.0.1/32", 5);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 1, "fallback");
	ASSERT_EQ(it[0].remote, 0, "the 550 units not charged");
	ASSERT_EQ(a.st.charged_units_total, 0, "nothing charged");
	ASSERT_TRUE(!a.r, "connection dropped");
	/* The second copy 30 ms late: the round trip it lands in refuses it. */
	h.mode = H_DOUBLE_LATE;
	h.from = 1;
	acc = atomic_load(&h.accepted);
	/* After a failure the agent skips no interval, and connects again at once. */
	item(&it[0], "198.18.0.1/32", 5);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a whole reply");
	ASSERT_EQ(it[0].remote, 550, "its charge, as the server says");
	ASSERT_EQ(atomic_load(&h.accepted), acc + 1, "a new connection");
	usleep(60000);
	item(&it[0], "198.18.0.1/32", 5);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 1, "the late copy: fallback");
	ASSERT_EQ(it[0].remote, 0, "the late copy is not charged");
	ASSERT_EQ(a.st.charged_units_total, 550, "only the reply asked for was charged");
	ASSERT_TRUE(!a.r, "connection dropped");
out:
	rl_sync_agent_fini(&a);
	hostile_stop(&h);
}

/* The state in "stats IFACE --json" of @ns into @state ("?" if none). */
static void stats_state(struct rl_ns *ns, char *state, size_t len)
{
	char *out = NULL, *p;

	snprintf(state, len, "?");
	if (!rl_ns_cli(ns, &out, NULL, "stats %s --json", ns->rx_if) && out &&
	    (p = strstr(out, "\"sync\":")) && (p = strstr(p, "\"state\":\""))) {
		p += 9;
		snprintf(state, len, "%.*s", (int)strcspn(p, "\""), p);
	}
	free(out);
}

TEST_FLAGS(sync_hostile_cli, RL_TEST_ROOT)
{
	char cmd[512], state[32] = "?", log[64], args[64], *out = NULL;
	struct rl_ns ns = {};
	struct hostile h;
	pid_t pid = 0;
	double t0, t;
	int st = 0;

	snprintf(log, sizeof(log), "/tmp/rlt-%d-hostile.log", getpid());
	if (!ASSERT_TRUE(hostile_start(&h, H_TRICKLE, 2), "hostile server") ||
	    !ASSERT_OK(rl_ns_create(&ns), "netns"))
		goto out;
	snprintf(args, sizeof(args), "attach %s --rate 1000 --burst 100", ns.rx_if);
	if (!ASSERT_TRUE(rl_ns_cli_ok(&ns, "attach", args), "attach"))
		goto out;
	snprintf(cmd, sizeof(cmd),
		 "exec nsenter --net=/run/netns/%s %s/xdp-ratelimit sync %s --redis %s --group h "
		 "--node a --interval 200ms 2>%s </dev/null",
		 ns.rx, rl_build_dir, ns.rx_if, h.url_unix, log);
	t0 = rl_test_mono();
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* The first round trip trickles: stats says fallback-local within a round or two. */
	while (rl_test_mono() - t0 < 3) {
		stats_state(&ns, state, sizeof(state));
		if (!strcmp(state, "fallback-local"))
			break;
		usleep(20000);
	}
	t = rl_test_mono() - t0;
	fprintf(stderr, "    cli: stats says %s %.3f s after the start\n", state, t);
	ASSERT_STREQ(state, "fallback-local", "stats: fallback-local");
	/* Mid-trickle again (every round trip trickles): SIGTERM ends it within 1 s. */
	usleep(250000);
	t0 = rl_test_mono();
	kill(pid, SIGTERM);
	for (int i = 0; i < 300 && waitpid(pid, &st, WNOHANG) != pid; i++)
		usleep(5000);
	t = rl_test_mono() - t0;
	fprintf(stderr, "    cli: exited %.3f s after SIGTERM\n", t);
	if (ASSERT_TRUE(t < 1.0, "SIGTERM ends it within 1 s")) {
		pid = 0;
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a clean exit");
	}
	if (!rl_sh(&out, "cat %s", log))
		ASSERT_CONTAINS(out, "no answer within 200 ms", "says the round trip overran");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	free(out);
	unlink(log);
	rl_ns_destroy(&ns);
	hostile_stop(&h);
}

TEST(sync_charge_refused)
{
	struct rl_sync_agent a = {}, b = {};
	struct rl_sync_cfg ca, cb;
	struct rl_sync_item it[1];
	struct redis_srv s;
	char err[512];

	if (!redis_srv_available()) {
		rl_test_skip("no redis-server");
		return;
	}
	if (!ASSERT_TRUE(redis_srv_start(&s, false), "redis-server"))
		goto out;
	cfg_url(&ca, s.url, 100 * MS);
	cfg_url(&cb, s.url, 100 * MS);
	cb.node = "b";
	if (!ASSERT_OK(rl_sync_agent_init(&a, &ca, POLICY, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_sync_agent_init(&b, &cb, POLICY, err, sizeof(err)), err))
		goto out;
	/* The bound: 1 other node x (burst 100 + 1000/s x 2 x 1 s stale). */
	ASSERT_EQ(rl_sync_charge_max(POLICY, 2, a.stale_ms), 2100, "the bound");
	ASSERT_EQ(rl_sync_charge_max(POLICY, 1, a.stale_ms), 0, "alone: nothing");
	ASSERT_EQ(rl_sync_charge_max("algo=fixed-window\nrate=100/1\nwindow_ns=1000000000\n", 3,
				     1000),
		  2 * 100 * 4, "windows: 2 x limit x (2 s / 1 s + 2)");
	/* A limit rule's line raises the bound to its own; an allow rule's changes nothing. */
	ASSERT_EQ(rl_sync_charge_max(POLICY "rule.dns=limit algo=token-bucket bytes=0 rate=5000/1 "
					    "burst=300 window_ns=1000000000 0123456789abcdef\n"
					    "rule.ok=allow 0123456789abcdef\n",
				     2, a.stale_ms),
		  10300, "a rule's bound: 1 x (300 + 5000/s x 2 s)");
	ASSERT_EQ(rl_sync_charge_max(POLICY "rule.ok=allow 0123456789abcdef\n", 2, a.stale_ms),
		  2100, "an allow rule: the default's bound");
	for (int i = 0; i < 2; i++) {
		item(&it[0], "198.18.0.1/32", 10);
		ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a");
		item(&it[0], "198.18.0.1/32", 10);
		ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b");
	}
	ASSERT_EQ(it[0].remote, 10, "b gets a's units");
	/* Whoever can write to Redis adds 10^12 to the source's total (in its epoch's hash). */
	ASSERT_OK(rl_sh(NULL,
			"for k in $(redis-cli -s '%s' --scan --pattern 'rl:{h:0}:d:*'); do "
			"[ \"$(redis-cli -s '%s' HEXISTS \"$k\" 198.18.0.1/32)\" = 1 ] && "
			"redis-cli -s '%s' HINCRBY \"$k\" 198.18.0.1/32 1000000000000; done; true",
			s.sock, s.sock, s.sock),
		  "HINCRBY");
	item(&it[0], "198.18.0.1/32", 10);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a");
	ASSERT_EQ(it[0].remote, 0, "the forged charge refused");
	ASSERT_EQ(a.st.charges_refused_total, 1, "and counted");
	ASSERT_EQ(a.st.charged_units_total, 10, "only b's honest units charged so far");
	/* The next honest charge goes through. */
	item(&it[0], "198.18.0.1/32", 7);
	ASSERT_EQ(rl_sync_agent_step(&b, it, 1, err, sizeof(err)), 0, "b");
	item(&it[0], "198.18.0.1/32", 1);
	ASSERT_EQ(rl_sync_agent_step(&a, it, 1, err, sizeof(err)), 0, "a");
	ASSERT_EQ(it[0].remote, 7, "b's 7 units");
	fprintf(stderr, "    refused %llu charge(s), charged %llu units\n",
		(unsigned long long)a.st.charges_refused_total,
		(unsigned long long)a.st.charged_units_total);
out:
	rl_sync_agent_fini(&a);
	rl_sync_agent_fini(&b);
	redis_srv_stop(&s);
}
