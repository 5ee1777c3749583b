// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * exporter: what it serves (promtool accepts it, the values are stats'),
 * interfaces appearing and vanishing while it runs, a real Prometheus
 * scraping it during a flood, and bad clients.
 *
 * Both servers listen on 127.0.0.1 only, on ports the kernel picks. Each is
 * stopped (SIGTERM, then SIGKILL) and reaped on every path; temporary files
 * are removed; the namespaces go through rl_ns_destroy().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "metrics.h"
#include "netns.h"
#include "test.h"

/* A server we started: its pid, port and the file its stderr goes to. */
struct server {
	pid_t pid;
	int port;
	char log[64];
};

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Stop @s: @sig, at most 10 s, then SIGKILL. Its exit status, or -1 if killed. */
static int server_stop_sig(struct server *s, int sig)
{
	int status = 0;

	if (rl_proc_stop(&s->pid, sig, 10000, &status))
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int server_stop(struct server *s)
{
	return server_stop_sig(s, SIGTERM);
}

/* Run argv with stderr (and stdout) into s->log. */
static int server_spawn(struct server *s, char *const argv[])
{
	int fd;

	snprintf(s->log, sizeof(s->log), "/tmp/rlt-%d-exp-XXXXXX", (int)getpid());
	fd = mkstemp(s->log);
	if (fd < 0)
		return -errno;
	s->pid = fork();
	if (s->pid < 0) {
		close(fd);
		return -errno;
	}
	if (!s->pid) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	return 0;
}

/* The exporter with --listen @listen: its port, read from "listening on http://@shown:". */
static bool exporter_start_on(struct server *s, const char *listen, const char *shown)
{
	char exe[PATH_MAX], want[96], lst[64];
	char *argv[] = { exe, "exporter", "--listen", lst, NULL };

	memset(s, 0, sizeof(*s));
	snprintf(exe, sizeof(exe), "%s/xdp-ratelimit", rl_build_dir);
	snprintf(lst, sizeof(lst), "%s", listen);
	snprintf(want, sizeof(want), "listening on http://%s:", shown);
	if (!ASSERT_OK(server_spawn(s, argv), "start the exporter"))
		return false;
	for (int i = 0; i < 500 && !s->port; i++) {
		char buf[512] = "";
		FILE *f = fopen(s->log, "r");
		const char *p;

		if (f) {
			buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
			fclose(f);
		}
		p = strstr(buf, want);
		if (p)
			s->port = atoi(p + strlen(want));
		else
			usleep(10000);
	}
	return ASSERT_TRUE(s->port > 0, want);
}

/* The exporter on 127.0.0.1, a port of the kernel's choosing: read back from its message. */
static bool exporter_start(struct server *s)
{
	return exporter_start_on(s, "127.0.0.1:0", "127.0.0.1");
}

static void server_cleanup(struct server *s)
{
	server_stop(s);
	if (s->log[0])
		unlink(s->log);
	s->log[0] = '\0';
}

/* A connection to @port on the loopback of @family (127.0.0.1 or ::1), 5 s timeouts; -1 if none. */
static int connect_loopback(int family, int port)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r;

	if (fd < 0)
		return -1;
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	r = family == AF_INET6 ? connect(fd, (struct sockaddr *)&a6, sizeof(a6)) :
				 connect(fd, (struct sockaddr *)&a4, sizeof(a4));
	if (r) {
		close(fd);
		return -1;
	}
	return fd;
}

static int connect_lo(int port)
{
	return connect_loopback(AF_INET, port);
}

/* The status line's code of an HTTP response, or -1. */
static int status_of(const char *resp)
{
	int status;

	return resp && sscanf(resp, "HTTP/1.%*d %d", &status) == 1 ? status : -1;
}

/* Read until EOF (at most 8 MiB, each read at most 5 s): a malloc'd string. */
static char *read_all(int fd)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	ssize_t n;

	while (buf && len < (8u << 20)) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* One HTTP/1.0 request (the server closes after it): the status, the body into *body. */
static int http(int port, const char *method, const char *path, const char *extra, char **body)
{
	char *req = NULL, *resp, *b;
	int fd, status = -1;
	ssize_t n;

	if (body)
		*body = NULL;
	if (asprintf(&req, "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\n", method, path,
		     extra ? extra : "") < 0)
		return -1;
	fd = connect_lo(port);
	if (fd < 0) {
		free(req);
		return -1;
	}
	/* A server refusing a huge request may close before reading it all: that is an answer. */
	n = write(fd, req, strlen(req));
	free(req);
	if (n <= 0) {
		close(fd);
		return -1;
	}
	resp = read_all(fd);
	close(fd);
	status = status_of(resp);
	b = resp ? strstr(resp, "\r\n\r\n") : NULL;
	if (body && b)
		*body = strdup(b + 4);
	free(resp);
	return status;
}

/* The value of the series @series (name and labels, exactly as printed), or -1. */
static double metric(const char *body, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static unsigned long long netns_ino(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

/* `promtool check metrics` on @body: 0 when it accepts it. */
static int promtool(const char *body)
{
	char path[64], cmd[256], *out = NULL, *err = NULL;
	int fd, rc;

	snprintf(path, sizeof(path), "/tmp/rlt-%d-prom-XXXXXX", (int)getpid());
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	rc = write(fd, body, strlen(body)) == (ssize_t)strlen(body) ? 0 : -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	if (!rc)
		rc = rl_run(cmd, &out, &err);
	if (rc)
		fprintf(stderr, "    promtool: %s%s", out ? out : "", err ? err : "");
	unlink(path);
	free(out);
	free(err);
	return rc;
}

/* "stats IFACE --json" of the receiving end. */
static char *stats_json(struct rl_ns *ns)
{
	char *out = NULL, *err = NULL;

	if (!ASSERT_EQ(rl_ns_cli(ns, &out, &err, "stats %s --json", ns->rx_if), 0,
		       "stats --json")) {
		free(out);
		out = NULL;
	}
	free(err);
	return out;
}

/* The series NAME{iface=IF,netns=INO[,EXTRA]}. */
static void series(char *buf, size_t len, const char *name, const char *iface,
		   unsigned long long ino, const char *extra)
{
	snprintf(buf, len, "xdp_ratelimit_%s{iface=\"%s\",netns=\"%llu\"%s%s}", name, iface, ino,
		 extra ? "," : "", extra ? extra : "");
}

/* The interface made while the exporter runs: its pin name encodes the dot (%2e). */
#define LATE_IF "rlx.late0"

TEST_FLAGS(exporter_scrape, RL_TEST_ROOT)
{
	/* 20000 packets from one source, far over its limit: passes and drops. */
	struct rl_flow f = { .src = "198.18.0.10", .count = 20000, .gap = "5us" };
	static const struct {
		const char *name, *extra, *json;
	} cmp[] = {
		{ "packets_total", "verdict=\"passed\"", "passed" },
		{ "packets_total", "verdict=\"dropped\"", "dropped" },
		{ "bytes_total", "verdict=\"passed\"", "passed_bytes" },
		{ "bytes_total", "verdict=\"dropped\"", "dropped_bytes" },
		{ "limited_packets_total", NULL, "limited" },
		{ "ip_packets_total", "family=\"ipv4\"", "ipv4" },
		{ "ip_packets_total", "family=\"ipv6\"", "ipv6" },
		{ "new_sources_total", NULL, "new_sources" },
		{ "would_drop_packets_total", NULL, "would_drop" },
		{ "sources", "family=\"ipv4\"", "sources" },
	};
	struct server e = {};
	struct rl_ns ns;
	char *body = NULL, *js = NULL, s[256], args[256];
	unsigned long long ino, v;
	bool late = false;

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespaces"))
		goto out;
	ino = netns_ino(ns.rx);
	snprintf(args, sizeof(args), "attach %s --rate 1000 --burst 100", ns.rx_if);
	if (!ASSERT_TRUE(ino, "the namespace's inode") || !rl_ns_cli_ok(&ns, "attach", args) ||
	    !ASSERT_OK(rl_flow_start(&ns, &f), "start the flow") ||
	    !ASSERT_OK(rl_flow_wait(&f), "the flow ran"))
		goto out;
	usleep(200000); /* the receive path drains */
	if (!exporter_start(&e))
		goto out;
	if (!ASSERT_EQ(http(e.port, "GET", "/metrics", NULL, &body), 200, "GET /metrics") ||
	    !ASSERT_TRUE(body, "a body"))
		goto out;
	ASSERT_OK(promtool(body), "promtool check metrics accepts it");
	js = stats_json(&ns);
	if (!js)
		goto out;
	/* No traffic now: the exporter's numbers are stats' exactly. */
	for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
		series(s, sizeof(s), cmp[i].name, ns.rx_if, ino, cmp[i].extra);
		if (!ASSERT_TRUE(rl_json_u64(js, cmp[i].json, &v), cmp[i].json))
			continue;
		if (!ASSERT_EQ((unsigned long long)metric(body, s), v, s))
			fprintf(stderr, "    scrape:\n%s", body);
	}
	series(s, sizeof(s), "packets_total", ns.rx_if, ino, "verdict=\"dropped\"");
	ASSERT_TRUE(metric(body, s) > 0, "the flood was limited");
	series(s, sizeof(s), "sources_capacity", ns.rx_if, ino, "family=\"ipv4\"");
	ASSERT_EQ((unsigned long long)metric(body, s), RL_DEFAULT_MAX_SOURCES, "capacity");
	series(s, sizeof(s), "config_info", ns.rx_if, ino,
	       "algo=\"token-bucket\",rate=\"1000/s\",action=\"drop\"");
	ASSERT_EQ((unsigned long long)metric(body, s), 1, "the policy as an info metric");
	ASSERT_TRUE(strstr(body, "xdp_ratelimit_interfaces "), "the interface count");
	/* The pinned maps' memory: most of what stats shows, which adds the program's own maps. */
	series(s, sizeof(s), "memory_bytes", ns.rx_if, ino, NULL);
	if (ASSERT_TRUE(rl_json_u64(js, "memory_bytes", &v), "stats' memory_bytes")) {
		ASSERT_TRUE(metric(body, s) > 0.9 * (double)v, "memory_bytes: the maps' memory");
		ASSERT_TRUE(metric(body, s) <= (double)v, "memory_bytes: at most stats'");
	}

	/* An interface attached while the exporter runs appears at the next scrape... */
	if (!ASSERT_OK(rl_ns_rx_sh(&ns, NULL,
				   "ip link add " LATE_IF " type veth peer name " LATE_IF "p && "
				   "ip link set " LATE_IF " up && ip link set " LATE_IF "p up"),
		       "make a second interface"))
		goto out;
	if (!rl_ns_cli_ok(&ns, "attach the second",
			  "attach " LATE_IF " --rate 50 --action dry-run"))
		goto out;
	late = true;
	free(body);
	series(s, sizeof(s), "config_info", LATE_IF, ino,
	       "algo=\"token-bucket\",rate=\"50/s\",action=\"dry-run\"");
	if (ASSERT_EQ(http(e.port, "GET", "/metrics", NULL, &body), 200, "GET /metrics"))
		ASSERT_EQ((unsigned long long)metric(body, s), 1, "the new interface appears");
	/* ... and vanishes once detached, the first one still there. */
	if (!rl_ns_cli_ok(&ns, "detach the second", "detach " LATE_IF))
		goto out;
	late = false;
	free(body);
	if (ASSERT_EQ(http(e.port, "GET", "/metrics", NULL, &body), 200, "GET /metrics")) {
		ASSERT_TRUE(!strstr(body, "iface=\"" LATE_IF "\""), "the detached one is gone");
		series(s, sizeof(s), "packets_total", ns.rx_if, ino, "verdict=\"passed\"");
		ASSERT_TRUE(metric(body, s) > 0, "the first is still there");
	}

	/*
	 * An interface deleted under its limiter leaves pins no program uses: an
	 * orphan, counted as such and not shown as a limiter.
	 */
	if (!rl_ns_cli_ok(&ns, "attach again", "attach " LATE_IF " --rate 50"))
		goto out;
	late = true;
	if (!ASSERT_OK(rl_ns_rx_sh(&ns, NULL, "ip link del " LATE_IF), "delete it"))
		goto out;
	/* The program is freed after the link, asynchronously: a few scrapes at most. */
	for (int i = 0; i < 50; i++) {
		free(body);
		body = NULL;
		if (http(e.port, "GET", "/metrics", NULL, &body) == 200 && body &&
		    !strstr(body, "iface=\"" LATE_IF "\""))
			break;
		usleep(100000);
	}
	ASSERT_TRUE(body && !strstr(body, "iface=\"" LATE_IF "\""), "a deleted one is gone");
	ASSERT_TRUE(metric(body, "xdp_ratelimit_orphaned_pins") >= 1, "its pins count as orphaned");
	/* detach of a name that is gone removes its pins. */
	if (rl_ns_cli_ok(&ns, "remove the orphan", "detach " LATE_IF))
		late = false;
	ASSERT_EQ(server_stop(&e), 0, "SIGTERM stops the exporter with status 0");
out:
	if (late)
		rl_ns_cli(&ns, NULL, NULL, "detach " LATE_IF);
	server_cleanup(&e);
	free(body);
	free(js);
	rl_ns_destroy(&ns);
}

/* Counter @key of rule @rule in the JSON of stats (false if it is not there). */
static bool rule_u64(const char *json, const char *rule, const char *key, unsigned long long *v)
{
	char name[64];
	const char *at;

	snprintf(name, sizeof(name), "\"name\":\"%s\"", rule);
	at = json ? strstr(json, name) : NULL;
	return at && rl_json_u64(at, key, v);
}

/*
 * Rules: each rule's counters by verdict and reason equal stats', its
 * sources too, and the blocked-source gauge counts what blocked lists;
 * promtool accepts the whole scrape with them.
 */
TEST_FLAGS(exporter_rules, RL_TEST_ROOT)
{
	/* blk: 2000 packets from one source over its 50/s: limited, then blocked. */
	struct rl_flow f1 = { .src = "198.18.0.10", .count = 2000, .gap = "5us" };
	/* dry: 100 packets a dry-run deny would drop, passed. */
	struct rl_flow f2 = { .src = "198.18.0.20", .count = 100, .gap = "5us" };
	static const char *const rules[] = { "blk", "dry", "never" };
	static const struct {
		const char *name, *extra, *json;
	} cmp[] = {
		{ "rule_packets_total", "verdict=\"passed\"", "passed" },
		{ "rule_packets_total", "verdict=\"dropped\"", "dropped" },
		{ "rule_bytes_total", "verdict=\"passed\"", "passed_bytes" },
		{ "rule_bytes_total", "verdict=\"dropped\"", "dropped_bytes" },
		{ "rule_decided_packets_total", "reason=\"allowed\"", "allowed" },
		{ "rule_decided_packets_total", "reason=\"denied\"", "denied" },
		{ "rule_decided_packets_total", "reason=\"limited\"", "limited" },
		{ "rule_decided_packets_total", "reason=\"blocked\"", "blocked" },
		{ "rule_would_drop_packets_total", NULL, "would_drop" },
	};
	char *body = NULL, *js = NULL, *bl = NULL, s[256], extra[128], args[256];
	unsigned long long ino, v;
	struct server e = {};
	struct rl_ns ns;

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespaces"))
		goto out;
	ino = netns_ino(ns.rx);
	snprintf(args, sizeof(args), "attach %s --rate 1000 --burst 100", ns.rx_if);
	if (!ASSERT_TRUE(ino, "the namespace's inode") || !rl_ns_cli_ok(&ns, "attach", args))
		goto out;
	snprintf(args, sizeof(args),
		 "rule add %s blk --src 198.18.0.10 --proto udp --rate 50 --burst 10 --block 60s",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add blk", args))
		goto out;
	snprintf(args, sizeof(args), "rule add %s dry --src 198.18.0.20 --deny --action dry-run",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add dry", args))
		goto out;
	snprintf(args, sizeof(args), "rule add %s never --src 198.18.1.0/24 --rate 5", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add never", args) ||
	    !ASSERT_OK(rl_flow_start(&ns, &f1), "start the flood") ||
	    !ASSERT_OK(rl_flow_wait(&f1), "the flood ran") ||
	    !ASSERT_OK(rl_flow_start(&ns, &f2), "start the dry-run flow") ||
	    !ASSERT_OK(rl_flow_wait(&f2), "the dry-run flow ran"))
		goto out;
	usleep(200000); /* the receive path drains */
	if (!exporter_start(&e))
		goto out;
	if (!ASSERT_EQ(http(e.port, "GET", "/metrics", NULL, &body), 200, "GET /metrics") ||
	    !ASSERT_TRUE(body, "a body"))
		goto out;
	ASSERT_OK(promtool(body), "promtool check metrics accepts it, rules and all");
	js = stats_json(&ns);
	if (!js || !ASSERT_EQ(rl_ns_cli(&ns, &bl, NULL, "blocked %s --json", ns.rx_if), 0,
			      "blocked --json"))
		goto out;
	/* No traffic now: the exporter's numbers are stats' exactly. */
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
			snprintf(extra, sizeof(extra), "rule=\"%s\"%s%s", rules[r],
				 cmp[i].extra ? "," : "", cmp[i].extra ? cmp[i].extra : "");
			series(s, sizeof(s), cmp[i].name, ns.rx_if, ino, extra);
			if (!ASSERT_TRUE(rule_u64(js, rules[r], cmp[i].json, &v), cmp[i].json))
				continue;
			if (!ASSERT_EQ((unsigned long long)metric(body, s), v, s))
				fprintf(stderr, "    scrape:\n%s", body);
		}
	}
	/* The traffic did what the comparison relies on: it is not all zeros. */
	series(s, sizeof(s), "rule_decided_packets_total", ns.rx_if, ino,
	       "rule=\"blk\",reason=\"blocked\"");
	ASSERT_TRUE(metric(body, s) > 0, "blk blocked its source");
	series(s, sizeof(s), "rule_would_drop_packets_total", ns.rx_if, ino, "rule=\"dry\"");
	ASSERT_EQ((unsigned long long)metric(body, s), 100, "dry would have dropped all 100");
	/* Sources and blocked sources: limit rules only. */
	series(s, sizeof(s), "rule_sources", ns.rx_if, ino, "rule=\"blk\"");
	if (ASSERT_TRUE(rule_u64(js, "blk", "sources", &v), "blk's sources"))
		ASSERT_EQ((unsigned long long)metric(body, s), v, "blk's sources, as stats");
	ASSERT_EQ((unsigned long long)metric(body, s), 1, "one source");
	series(s, sizeof(s), "blocked_sources", ns.rx_if, ino, "rule=\"blk\"");
	ASSERT_EQ((unsigned long long)metric(body, s), 1, "blk blocks its one source");
	ASSERT_TRUE(strstr(bl, "\"rule\":\"blk\"") != NULL, "as blocked lists it");
	series(s, sizeof(s), "blocked_sources", ns.rx_if, ino, "rule=\"never\"");
	ASSERT_EQ((unsigned long long)metric(body, s), 0, "never blocks none");
	series(s, sizeof(s), "rule_sources", ns.rx_if, ino, "rule=\"dry\"");
	ASSERT_EQ(metric(body, s), -1, "a deny rule keeps no sources: no such series");
	ASSERT_EQ(server_stop(&e), 0, "SIGTERM stops the exporter with status 0");
out:
	server_cleanup(&e);
	free(body);
	free(js);
	free(bl);
	rl_ns_destroy(&ns);
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* Clients at once in the many-clients round, and the bound on what the exporter may answer. */
#define NCLIENTS 200

TEST_FLAGS(exporter_bad_requests, RL_TEST_ROOT)
{
	static int fds[NCLIENTS];
	struct server e = {};
	char *big = NULL, *body = NULL;
	long rss0, rss1;
	int ok = 0, status;

	for (int i = 0; i < NCLIENTS; i++)
		fds[i] = -1;
	if (!exporter_start(&e))
		goto out;
	/* Warm up (first scrape, thread stacks), then the baseline. */
	for (int i = 0; i < 20; i++)
		http(e.port, "GET", "/metrics", NULL, NULL);
	rss0 = rss_kib(e.pid);
	ASSERT_EQ(http(e.port, "GET", "/nope", NULL, NULL), 404, "unknown path: 404");
	ASSERT_EQ(http(e.port, "GET", "/metrics/../x", NULL, NULL), 404, "another: 404");
	ASSERT_EQ(http(e.port, "POST", "/metrics", NULL, NULL), 405, "POST: 405");
	ASSERT_EQ(http(e.port, "HEAD", "/metrics", NULL, NULL), 200, "HEAD: 200");

	/* A 64 KiB header: refused (a 4xx, or the connection closed), never served. */
	big = malloc(65536 + 32);
	if (!ASSERT_TRUE(big, "malloc"))
		goto out;
	strcpy(big, "X-Big: ");
	memset(big + 7, 'a', 65536);
	strcpy(big + 7 + 65536, "\r\n");
	status = http(e.port, "GET", "/metrics", big, NULL);
	printf("    64 KiB header: status %d\n", status);
	ASSERT_TRUE(status >= 400 && status < 500, "a 64 KiB header is refused with a 4xx");

	/* NCLIENTS at once: each gets an answer or is turned away; none hangs the server. */
	for (int i = 0; i < NCLIENTS; i++) {
		fds[i] = connect_lo(e.port);
		if (fds[i] >= 0 && write(fds[i], "GET /metrics HTTP/1.0\r\n\r\n", 25) != 25) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	for (int i = 0; i < NCLIENTS; i++) {
		char *r;

		if (fds[i] < 0)
			continue;
		r = read_all(fds[i]);
		ok += r && !strncmp(r, "HTTP/1.", 7) && strstr(r, " 200 ");
		free(r);
		close(fds[i]);
		fds[i] = -1;
	}
	printf("    %d of %d clients at once answered\n", ok, NCLIENTS);
	ASSERT_TRUE(ok >= 32, "at least the connection limit answered");

	/* Clients gone mid-response: request, read a few bytes, reset the connection. */
	for (int i = 0; i < 100; i++) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		int fd = connect_lo(e.port);
		char b[16];

		if (fd < 0)
			continue;
		if (write(fd, "GET /metrics HTTP/1.0\r\n\r\n", 25) == 25 && (i & 1))
			(void)!read(fd, b, sizeof(b));
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
	}
	/* A slow client holding a connection open does not stop the others. */
	fds[0] = connect_lo(e.port);
	if (fds[0] >= 0)
		(void)!write(fds[0], "GET /met", 8);
	ASSERT_EQ(http(e.port, "GET", "/metrics", NULL, &body), 200, "still answers afterwards");
	ASSERT_TRUE(body && strstr(body, "xdp_ratelimit_interfaces "), "with the metrics");
	rss1 = rss_kib(e.pid);
	printf("    RSS %ld KiB before, %ld KiB after\n", rss0, rss1);
	ASSERT_TRUE(rss0 > 0 && rss1 > 0, "RSS read");
	ASSERT_LE((unsigned long long)rss1, (unsigned long long)rss0 + 16384,
		  "RSS grew by at most 16 MiB");
	ASSERT_TRUE(waitpid(e.pid, &status, WNOHANG) == 0, "the exporter is still running");
	ASSERT_EQ(server_stop_sig(&e, SIGINT), 0, "SIGINT stops it with status 0");
out:
	for (int i = 0; i < NCLIENTS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	server_cleanup(&e);
	free(big);
	free(body);
}

/* A TCP port free on 127.0.0.1 now (the kernel's pick; Prometheus takes no port 0). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* The first value of a Prometheus instant-query answer ("value":[T,"V"]), or -1. */
static double prom_value(const char *json)
{
	const char *p = json ? strstr(json, "\"value\":[") : NULL;

	p = p ? strchr(p, ',') : NULL;
	if (!p || p[1] != '"')
		return -1;
	return strtod(p + 2, NULL);
}

/* The drop rate seen in "stats --json" (dropped, at wall time *t). */
static bool stats_dropped(struct rl_ns *ns, unsigned long long *d, double *t)
{
	char *js;
	bool ok;

	*t = wall_now();
	js = stats_json(ns);
	ok = js && ASSERT_TRUE(rl_json_u64(js, "dropped", d), "stats has dropped");
	*t = (*t + wall_now()) / 2;
	free(js);
	return ok;
}

#define MAX_SAMPLES 100
/* The window of rate(), in seconds. */
#define WINDOW 6

/*
 * An instant query at wall time @t: FN(xdp_ratelimit_packets_total{dropped, @iface}[WINDOW]),
 * or the window's raw samples when @fn is "". 0 or the curl failure.
 */
static bool prom_query(int port, const char *fn, const char *iface, double t, char **out)
{
	char q[512];

	snprintf(q, sizeof(q),
		 "curl -sf -m 5 'http://127.0.0.1:%d/api/v1/query' --data-urlencode "
		 "'query=%s(xdp_ratelimit_packets_total{verdict=\"dropped\",iface=\"%s\"}[%ds])' "
		 "--data-urlencode 'time=%.3f'",
		 port, fn, iface, WINDOW, t);
	return ASSERT_EQ(rl_run(q, out, NULL), 0, "query prometheus");
}

/* The first and last [T,"V"] pairs of a range-vector answer ("values":[[T,"V"],...]). */
static bool prom_range(const char *json, double *ta, double *va, double *tb, double *vb)
{
	const char *p = json ? strstr(json, "\"values\":[[") : NULL, *q;
	int n = 0;

	if (!p)
		return false;
	for (q = p + strlen("\"values\":["); *q == '['; n++) {
		double t = strtod(q + 1, NULL), v;
		const char *c = strchr(q, ',');

		if (!c || c[1] != '"')
			return false;
		v = strtod(c + 2, NULL);
		if (!n) {
			*ta = t;
			*va = v;
		}
		*tb = t;
		*vb = v;
		q = strchr(c, ']');
		if (!q)
			return false;
		q++;
		if (*q == ',')
			q++;
	}
	return n >= 2;
}

/* The series (t[i], v[i]) at time @x, linearly between samples. */
static double interp(const double *t, const unsigned long long *v, int n, double x)
{
	for (int i = 1; i < n; i++)
		if (x <= t[i])
			return (double)v[i - 1] +
			       (double)(v[i] - v[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1]);
	return (double)v[n - 1];
}

TEST_FLAGS(exporter_prometheus, RL_TEST_ROOT)
{
	/*
	 * Longer than the 1 + 9 s the test samples it, however fast it goes: the
	 * 5 us gap allows at most 200 kpps, and 8M packets take 40 s at that rate
	 * (15-60 kpps is usual here, on two shared CPUs; 600k packets, which this
	 * was, ran out before the sampling ended at ~60 kpps). Stopped after the
	 * last sample; bounded by timeout(1) at 40 s.
	 */
	struct rl_flow f = { .src = "198.18.0.20", .count = 8000000, .gap = "5us", .limit_s = 40 };
	struct server e = {}, p = {};
	char dir[64] = "", cfg[PATH_MAX], data[PATH_MAX], listen[64], exe[] = "/usr/bin/prometheus";
	char cfgarg[PATH_MAX + 16], dataarg[PATH_MAX + 32], args[128], q[512], *out = NULL;
	static unsigned long long sd[MAX_SAMPLES];
	static double st[MAX_SAMPLES];
	double t2, stats_rate, prom_rate, ta, va, tb, vb;
	int pport, ns_samples, last;
	struct rl_ns ns;
	FILE *f_cfg;

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespaces"))
		goto out;
	snprintf(args, sizeof(args), "attach %s --rate 2000 --burst 2000", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", args) || !exporter_start(&e))
		goto out;
	snprintf(dir, sizeof(dir), "/tmp/rlt-%d-prom-XXXXXX", (int)getpid());
	if (!ASSERT_TRUE(mkdtemp(dir), "a temporary directory")) {
		dir[0] = '\0';
		goto out;
	}
	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	f_cfg = fopen(cfg, "w");
	if (!ASSERT_TRUE(f_cfg, "write the configuration"))
		goto out;
	fprintf(f_cfg,
		"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
		"scrape_configs:\n  - job_name: xdp-ratelimit\n    static_configs:\n"
		"      - targets: ['127.0.0.1:%d']\n",
		e.port);
	fclose(f_cfg);
	pport = free_port();
	if (!ASSERT_TRUE(pport > 0, "a free port"))
		goto out;
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", pport);
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	snprintf(dataarg, sizeof(dataarg), "--storage.tsdb.path=%s", data);
	{
		char *argv[] = { exe, cfgarg, dataarg, listen, NULL };

		if (!ASSERT_OK(server_spawn(&p, argv), "start prometheus"))
			goto out;
	}
	p.port = pport;
	/* Ready within 20 s, and one scrape of ours done. */
	snprintf(
		q, sizeof(q),
		"curl -sf -m 2 'http://127.0.0.1:%d/api/v1/query?query=up%%7Bjob%%3D%%22xdp-ratelimit%%22%%7D'",
		pport);
	for (int i = 0; i < 80; i++) {
		free(out);
		out = NULL;
		if (!rl_run(q, &out, NULL) && prom_value(out) == 1)
			break;
		usleep(250000);
	}
	if (!ASSERT_EQ((unsigned long long)prom_value(out), 1, "prometheus scrapes the exporter")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "tail -20 %s >&2", p.log);
		rl_sh(NULL, "%s", cmd);
		goto out;
	}
	if (!ASSERT_OK(rl_flow_start(&ns, &f), "start the flood"))
		goto out;
	/*
	 * stats every 200 ms for 9 s of the flood. The flood's rate is not steady
	 * on a shared machine, so the two sides are compared over the same span:
	 * between the first and the last scrape inside the query's window, where
	 * the stats series is interpolated.
	 */
	sleep(1);
	for (ns_samples = 0; ns_samples < MAX_SAMPLES; ns_samples++) {
		if (!stats_dropped(&ns, &sd[ns_samples], &st[ns_samples]))
			goto out;
		if (st[ns_samples] - st[0] > 9)
			break;
		usleep(200000);
	}
	if (!ASSERT_TRUE(!rl_flow_done(&f), "the flood ran for the whole sampling"))
		goto out;
	/* Enough: the rest of the flood would only make the test longer. */
	rl_flow_stop(&f);
	last = ns_samples < MAX_SAMPLES ? ns_samples : MAX_SAMPLES - 1;
	t2 = st[last] - 0.5;
	/* One scrape after t2 has surely happened by now. */
	sleep(2);
	if (!prom_query(pport, "rate", ns.rx_if, t2, &out) ||
	    !ASSERT_TRUE((prom_rate = prom_value(out)) > 0, "a rate"))
		goto out;
	free(out);
	out = NULL;
	/* The raw scrapes in the window: their times and values. */
	if (!prom_query(pport, "", ns.rx_if, t2, &out) ||
	    !ASSERT_TRUE(prom_range(out, &ta, &va, &tb, &vb), "the window's scrapes") ||
	    !ASSERT_TRUE(ta >= st[0] && tb <= st[last] && tb - ta > 3, "inside the sampling"))
		goto out;
	stats_rate = (interp(st, sd, last + 1, tb) - interp(st, sd, last + 1, ta)) / (tb - ta);
	printf("    dropped/s from %.2f to %.2f s: stats %.0f, prometheus raw %.0f, "
	       "rate()[%ds] %.0f (%+.2f%%)\n",
	       ta - st[0], tb - st[0], stats_rate, (vb - va) / (tb - ta), WINDOW, prom_rate,
	       (prom_rate - stats_rate) / stats_rate * 100);
	ASSERT_TRUE(stats_rate > 5000, "the flood was mostly dropped");
	ASSERT_TRUE(prom_rate > 0.95 * stats_rate && prom_rate < 1.05 * stats_rate,
		    "prometheus' rate() of drops is stats' within 5%");
out:
	rl_flow_stop(&f);
	server_cleanup(&p);
	server_cleanup(&e);
	if (dir[0])
		rl_sh(NULL, "rm -rf '%s'", dir);
	free(out);
	rl_ns_destroy(&ns);
}

TEST(exporter_listen_parse)
{
	static const struct {
		const char *in;
		int family, port; /* family 0: refused */
	} cases[] = {
		{ "127.0.0.1:9977", AF_INET, 9977 },
		{ ":9977", AF_INET, 9977 },
		{ "0.0.0.0:0", AF_INET, 0 },
		{ "[::1]:9977", AF_INET6, 9977 },
		{ "[::]:1", AF_INET6, 1 },
		{ "127.0.0.1", 0, 0 },
		{ "127.0.0.1:", 0, 0 },
		{ "127.0.0.1:65536", 0, 0 },
		{ "127.0.0.1:-1", 0, 0 },
		{ "::1:9977", 0, 0 },
		{ "localhost:9977", AF_INET, 9977 },
		{ "nosuch-host.invalid:9977", 0, 0 },
		{ "[nosuch]:9977", 0, 0 },
		{ "[127.0.0.1]:9977", 0, 0 },
		{ "", 0, 0 },
	};
	struct sockaddr_storage ss;
	char err[256], *out = NULL, *errout = NULL, cmd[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = rl_listen_parse(cases[i].in, &ss, err, sizeof(err));

		if (!cases[i].family) {
			ASSERT_EQ(ret, -EINVAL, cases[i].in);
			continue;
		}
		if (!ASSERT_OK(ret, cases[i].in) ||
		    !ASSERT_EQ(ss.ss_family, cases[i].family, "family"))
			continue;
		ASSERT_EQ(ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
							  ((struct sockaddr_in6 *)&ss)->sin6_port),
			  cases[i].port, cases[i].in);
	}
	/* A name that does not resolve: the message names it. */
	ASSERT_EQ(rl_listen_parse("nosuch-host.invalid:1", &ss, err, sizeof(err)), -EINVAL,
		  "unresolvable");
	ASSERT_CONTAINS(err, "'nosuch-host.invalid'", "names the host");
	/* The command refuses it before anything else, with the usage status. */
	snprintf(cmd, sizeof(cmd), "%s/xdp-ratelimit exporter --listen 1.2.3:80", rl_build_dir);
	ASSERT_EQ(rl_run(cmd, &out, &errout), 2, "a bad --listen: exit status 2");
	ASSERT_CONTAINS(errout, "--listen", "the message names the option");
	free(out);
	free(errout);
}

/* One GET /metrics to [::1]:@port (HTTP/1.0): the status, or -1. */
static int http6(int port)
{
	const char req[] = "GET /metrics HTTP/1.0\r\nHost: [::1]\r\n\r\n";
	int fd = connect_loopback(AF_INET6, port), status;
	char *resp = NULL;

	if (fd < 0)
		return -1;
	if (write(fd, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1))
		resp = read_all(fd);
	close(fd);
	status = status_of(resp);
	free(resp);
	return status;
}

/*
 * --listen [::]:PORT takes IPv4 and IPv6 clients (dual-stack), localhost:PORT
 * is 127.0.0.1, and a name that does not resolve is refused, named.
 */
TEST_FLAGS(exporter_listen_dual_stack, RL_TEST_ROOT)
{
	char cmd[PATH_MAX + 64], *errout = NULL;
	struct server s = {};

	if (exporter_start_on(&s, "[::]:0", "[::]")) {
		ASSERT_EQ(http(s.port, "GET", "/metrics", NULL, NULL), 200, "[::]: over 127.0.0.1");
		ASSERT_EQ(http6(s.port), 200, "[::]: over ::1");
	}
	ASSERT_EQ(server_stop(&s), 0, "stopped");
	server_cleanup(&s);
	if (exporter_start_on(&s, "localhost:0", "127.0.0.1"))
		ASSERT_EQ(http(s.port, "GET", "/metrics", NULL, NULL), 200, "localhost: 127.0.0.1");
	ASSERT_EQ(server_stop(&s), 0, "stopped");
	server_cleanup(&s);
	/* A given IPv6 address only: [::1] takes no IPv4 client. */
	if (exporter_start_on(&s, "[::1]:0", "[::1]")) {
		ASSERT_EQ(http6(s.port), 200, "[::1]: over ::1");
		ASSERT_EQ(http(s.port, "GET", "/metrics", NULL, NULL), -1, "[::1]: not over IPv4");
	}
	server_cleanup(&s);
	snprintf(cmd, sizeof(cmd), "%s/xdp-ratelimit exporter --listen nosuch-host.invalid:80",
		 rl_build_dir);
	ASSERT_EQ(rl_run(cmd, NULL, &errout), 2, "an unknown host: exit status 2");
	ASSERT_CONTAINS(errout, "--listen: 'nosuch-host.invalid'", "the message names it");
	free(errout);
}

/*
 * Abuse: malformed request lines, half-closed sockets, an idle flood, a
 * scrape flood and a slowloris. During and after each, a scrape from
 * 127.0.0.1 succeeds, and once the abuse ends the exporter's open fds come
 * back to what they were before it.
 */

/* The exporter's open fds. */
static int fd_count(pid_t pid)
{
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* Wait (at most 8 s) for the exporter's fds to fall back to @base: the count then. */
static int fds_settle(pid_t pid, int base)
{
	int n = fd_count(pid);

	for (int i = 0; i < 80 && n > base; i++) {
		usleep(100000);
		n = fd_count(pid);
	}
	return n;
}

/*
 * A connection to the exporter from 127.1.(i / 250).(i % 250 + 1): every
 * abuser its own loopback address, so that the per-address limit alone does
 * not turn them away and the scraper's (127.0.0.1) is not theirs.
 */
static int connect_as(int port, int i)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	me.sin_addr.s_addr =
		htonl(0x7f010000u | (uint32_t)(i / 250) << 8 | (uint32_t)(i % 250 + 1));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* @len bytes of @req as they are (NULs included) on a new connection: the status answered. */
static int raw_status(int port, const char *req, size_t len)
{
	int fd = connect_lo(port), status = -1;
	char *resp;

	if (fd < 0)
		return -1;
	if (write(fd, req, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	resp = read_all(fd);
	close(fd);
	status = status_of(resp);
	free(resp);
	return status;
}

/* A normal scrape of /metrics answered in full; its latency into *@ms. */
static bool scrape_ok(int port, double *ms)
{
	double t0 = wall_now();
	char *body = NULL;
	bool ok = http(port, "GET", "/metrics", NULL, &body) == 200 && body &&
		  strstr(body, "xdp_ratelimit_interfaces ");

	*ms = (wall_now() - t0) * 1000;
	free(body);
	return ok;
}

/* After an abuse: a scrape succeeds (@scrape names it), and the fds go back to @base. */
static void after_abuse(const struct server *e, int base, double t0, const char *scrape,
			const char *what)
{
	char label[128];
	double ms;
	int after;

	ASSERT_TRUE(scrape_ok(e->port, &ms), scrape);
	after = fds_settle(e->pid, base);
	printf("    %5.1f s: %s: fds after %d\n", wall_now() - t0, what, after);
	snprintf(label, sizeof(label), "%s: fds back to their base", what);
	ASSERT_LE((unsigned long long)after, (unsigned long long)base, label);
}

/* Idle connections in the flood (fewer if our fd limit is lower), parallel scrapes, slowloris. */
#define N_IDLE	   1000
#define N_PARALLEL 500
#define N_SLOW	   40
/* Seconds the slowloris lasts: more than twice the exporter's 3 s request time. */
#define SLOW_S 7

TEST_FLAGS(exporter_abuse, RL_TEST_ROOT)
{
	static const struct {
		const char *req;
		size_t len;
		int status;
	} lines[] = {
#define L(s, st) { s, sizeof(s) - 1, st }
		L("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200),
		L("GET\0 /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("GET\0X /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("GET /metrics\0 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("GET /metrics%00.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("GET /met\x01rics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("G\x01T /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("G(T /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
		L("GET /metrics HTTP/1.1\0\r\nHost: x\r\n\r\n", 400),
		L("GET /metrics\r\n\r\n", 400),
		L("GET /metrics?x=%41 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 200),
#undef L
	};
	static int fds[N_IDLE > N_PARALLEL ? N_IDLE : N_PARALLEL];
	int base, during, n, ok, cut, nidle = N_IDLE;
	double ms, worst, t0 = wall_now();
	struct server e = {};
	struct rlimit rl;

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		fds[i] = -1;
	if (!exporter_start(&e))
		goto out;
	for (int i = 0; i < 5; i++)
		http(e.port, "GET", "/metrics", NULL, NULL);
	/* The last one's socket is closed just after we read its end: let it go. */
	usleep(300000);
	base = fd_count(e.pid);
	printf("    %5.1f s: exporter fds at rest: %d\n", wall_now() - t0, base);
	if (!ASSERT_TRUE(base > 0, "count its fds"))
		goto out;

	/* Request lines MHD parses, but are not HTTP: 400, whatever MHD made of them. */
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char what[96];

		snprintf(what, sizeof(what), "request line %zu (%.*s...)", i, 12, lines[i].req);
		for (char *p = what; *p; p++)
			if ((unsigned char)*p < 0x20)
				*p = '?';
		ASSERT_EQ(raw_status(e.port, lines[i].req, lines[i].len), lines[i].status, what);
	}

	/* Half-closed: part of a request, then no more (SHUT_WR); the exporter closes them. */
	for (int i = 0; i < 20; i++) {
		fds[i] = connect_as(e.port, i);
		if (fds[i] >= 0 &&
		    (write(fds[i], "GET /metr", 9) != 9 || shutdown(fds[i], SHUT_WR)))
			ASSERT_TRUE(false, "half-close a request");
	}
	ASSERT_TRUE(scrape_ok(e.port, &ms), "a scrape with 20 half-closed requests");
	printf("    %5.1f s: half-closed: fds %d, scrape %.1f ms\n", wall_now() - t0,
	       fd_count(e.pid), ms);
	for (int i = 0, closed = 0; i < 20; i++, closed = 0) {
		char *r = fds[i] >= 0 ? read_all(fds[i]) : NULL;

		/* EOF within its 5 s receive timeout, at most a 400 before it. */
		closed = r && (!*r || strstr(r, " 400 "));
		if (!ASSERT_TRUE(closed, "the exporter closes a half-closed request"))
			fprintf(stderr, "    got: %.60s\n", r ? r : "(timeout)");
		free(r);
		close(fds[i]);
		fds[i] = -1;
	}
	/* A whole request, then SHUT_WR: HTTP allows it, it is answered. */
	fds[0] = connect_as(e.port, 0);
	if (ASSERT_TRUE(fds[0] >= 0, "connect") &&
	    ASSERT_EQ(write(fds[0], "GET /metrics HTTP/1.0\r\n\r\n", 25), 25, "write") &&
	    ASSERT_OK(shutdown(fds[0], SHUT_WR), "shutdown")) {
		char *r = read_all(fds[0]);

		ASSERT_TRUE(r && strstr(r, " 200 "), "a whole request then SHUT_WR: 200");
		free(r);
	}
	close(fds[0]);
	fds[0] = -1;
	after_abuse(&e, base, t0, "a scrape after the half-closed ones", "half-closed");

	/* Idle flood: N_IDLE connections from as many addresses, sending nothing. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)N_IDLE + 64)
		nidle = (int)rl.rlim_cur - 64;
	for (n = 0; n < nidle; n++) {
		fds[n] = connect_as(e.port, n);
		if (fds[n] < 0)
			break;
	}
	during = fd_count(e.pid);
	ASSERT_EQ(n, nidle, "open the idle connections");
	ok = scrape_ok(e.port, &ms);
	printf("    %5.1f s: %d idle connections: exporter fds %d, scrape %.1f ms\n",
	       wall_now() - t0, n, during, ms);
	ASSERT_TRUE(ok, "a scrape while they are open");
	ASSERT_TRUE(ms < 2000, "answered within 2 s");
	ASSERT_LE((unsigned long long)during, (unsigned long long)base + 64 + 1,
		  "at most 64 of them held");
	for (int i = 0; i < n; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	after_abuse(&e, base, t0, "a scrape after the idle flood", "idle flood");

	/* Scrape flood: N_PARALLEL requests at once, from as many addresses. */
	for (n = 0; n < N_PARALLEL; n++) {
		fds[n] = connect_as(e.port, n);
		if (fds[n] < 0)
			break;
		if (write(fds[n], "GET /metrics HTTP/1.0\r\n\r\n", 25) != 25)
			break;
	}
	ASSERT_EQ(n, N_PARALLEL, "send the parallel scrapes");
	during = fd_count(e.pid);
	ok = scrape_ok(e.port, &ms);
	printf("    %5.1f s: %d parallel scrapes: exporter fds %d, our scrape %.1f ms\n",
	       wall_now() - t0, n, during, ms);
	ASSERT_TRUE(ok, "a scrape amid them");
	ok = 0;
	for (int i = 0; i < N_PARALLEL; i++) {
		char *r = fds[i] >= 0 ? read_all(fds[i]) : NULL;

		ok += r && strstr(r, " 200 ") && strstr(r, "xdp_ratelimit_interfaces ");
		free(r);
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	printf("    %5.1f s: %d of %d parallel scrapes answered in full\n", wall_now() - t0, ok,
	       N_PARALLEL);
	ASSERT_EQ(ok, N_PARALLEL, "each parallel scrape answered");
	after_abuse(&e, base, t0, "a scrape after them", "scrape flood");

	/*
	 * Slowloris: N_SLOW connections sending a request a byte a second for
	 * SLOW_S s, each reconnecting when cut off; a scrape every second.
	 */
	{
		static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: b\r\n";
		int pos[N_SLOW] = {};

		cut = 0;
		worst = 0;
		for (int i = 0; i < N_SLOW; i++)
			fds[i] = connect_as(e.port, i);
		for (int s = 0; s < SLOW_S; s++) {
			for (int i = 0; i < N_SLOW; i++) {
				struct pollfd pfd = { .fd = fds[i], .events = POLLIN };

				/* Cut off (EOF, an error or an answer): reconnect, start again. */
				if (fds[i] < 0 || poll(&pfd, 1, 0) > 0 ||
				    write(fds[i], req + pos[i] % (sizeof(req) - 1), 1) != 1) {
					if (fds[i] >= 0)
						close(fds[i]);
					cut += fds[i] >= 0;
					fds[i] = connect_as(e.port, i);
					pos[i] = 0;
					if (fds[i] >= 0 && write(fds[i], req, 1) == 1)
						pos[i] = 1;
					continue;
				}
				pos[i]++;
			}
			during = fd_count(e.pid);
			if (!ASSERT_TRUE(scrape_ok(e.port, &ms), "a scrape during the slowloris"))
				break;
			worst = ms > worst ? ms : worst;
			usleep(ms < 1000 ? (useconds_t)(1000 - ms) * 1000 : 0);
		}
		printf("    %5.1f s: slowloris, %d connections %d s: fds %d, slowest scrape %.1f ms, "
		       "%d cut off\n",
		       wall_now() - t0, N_SLOW, SLOW_S, during, worst, cut);
		ASSERT_TRUE(cut >= N_SLOW, "each slowloris connection was cut off");
		for (int i = 0; i < N_SLOW; i++) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
		}
	}
	after_abuse(&e, base, t0, "a scrape after the slowloris", "slowloris");
	ASSERT_TRUE(waitpid(e.pid, &n, WNOHANG) == 0, "the exporter is still running");
	ASSERT_EQ(server_stop(&e), 0, "SIGTERM stops it with status 0");
out:
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	server_cleanup(&e);
}
