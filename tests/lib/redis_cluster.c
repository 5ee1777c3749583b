// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A Redis Cluster of the test's own: see redis_cluster.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
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
#include "redis_cluster.h"
#include "test.h"

#define REDIS_SERVER "/usr/bin/redis-server"

/* Can a loopback TCP port be bound now? */
static bool port_free(unsigned int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = htons((unsigned short)port),
	};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !bind(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

/*
 * Ports for @n servers: in a namespace of the test's own, 7001...; in the
 * test's, a run of free ones whose bus ports (+10000) are free too.
 */
static bool pick_ports(struct redis_cluster *c)
{
	unsigned long long seed =
		(unsigned long long)getpid() * 7919ULL + (unsigned long long)time(NULL);

	if (c->netns[0]) {
		for (int i = 0; i < c->n; i++)
			c->port[i] = 7001 + (unsigned int)i;
		return true;
	}
	for (int tries = 0; tries < 200; tries++) {
		unsigned int base = 20000 + (unsigned int)rl_rand_below(&seed, 20000);
		bool ok = true;

		for (int i = 0; i < c->n && ok; i++)
			ok = port_free(base + (unsigned int)i) &&
			     port_free(base + 10000 + (unsigned int)i);
		if (!ok)
			continue;
		for (int i = 0; i < c->n; i++)
			c->port[i] = base + (unsigned int)i;
		return true;
	}
	return false;
}

static bool spawn(struct redis_cluster *c, int i)
{
	char port[16], dir[96], log[128], timeout[16];
	pid_t pid;

	snprintf(port, sizeof(port), "%u", c->port[i]);
	snprintf(dir, sizeof(dir), "%s/n%d", c->dir, i);
	snprintf(log, sizeof(log), "%s/redis.log", dir);
	snprintf(timeout, sizeof(timeout), "%u", c->node_timeout_ms);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		/* Dies with the runner, whatever kills it; in the cluster's namespace. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (c->netns[0]) {
			char path[96];
			int fd;

			snprintf(path, sizeof(path), "/run/netns/%s", c->netns);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, CLONE_NEWNET))
				_exit(126);
		}
		execl(REDIS_SERVER, REDIS_SERVER, "--port", port, "--bind", "127.0.0.1",
		      "--unixsocket", c->sock[i], "--unixsocketperm", "700", "--dir", dir,
		      "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		      "--cluster-node-timeout", timeout, "--cluster-replica-validity-factor", "0",
		      "--repl-diskless-sync-delay", "0", "--save", "", "--appendonly", "no",
		      "--daemonize", "no", "--logfile", log, "--enable-debug-command", "local",
		      (char *)NULL);
		_exit(127);
	}
	c->pid[i] = pid;
	return true;
}

static bool answers(struct redis_cluster *c, int i)
{
	char *out = NULL;
	bool ok = !access(c->sock[i], F_OK) && !redis_cluster_cli(c, i, &out, "PING") && out &&
		  strstr(out, "PONG");

	free(out);
	return ok;
}

bool redis_cluster_start(struct redis_cluster *c, int masters, int replicas,
			 unsigned int node_timeout_ms, const char *netns)
{
	char *out = NULL, *addrs = NULL;
	size_t off;
	bool up;

	memset(c, 0, sizeof(*c));
	c->n = masters * (1 + replicas);
	if (c->n > RL_CLUSTER_SRV_MAX || masters < 3)
		return false;
	snprintf(c->netns, sizeof(c->netns), "%s", netns ? netns : "");
	snprintf(c->dir, sizeof(c->dir), "/tmp/rl-cluster-XXXXXX");
	if (!mkdtemp(c->dir)) {
		c->dir[0] = '\0';
		return false;
	}
	if (!pick_ports(c))
		return false;
	c->node_timeout_ms = node_timeout_ms;
	for (int i = 0; i < c->n; i++) {
		snprintf(c->sock[i], sizeof(c->sock[i]), "%s/n%d.sock", c->dir, i);
		if (!spawn(c, i))
			return false;
	}
	off = (size_t)snprintf(c->url, sizeof(c->url), "cluster://");
	for (int i = 0; i < c->n; i++)
		off += (size_t)snprintf(c->url + off, sizeof(c->url) - off, "%s127.0.0.1:%u",
					i ? "," : "", c->port[i]);
	/* Up once each answers PING: at most 5 s. */
	for (int t = 0; t < 500; t++) {
		up = true;
		for (int i = 0; i < c->n && up; i++)
			up = answers(c, i);
		if (up)
			break;
		for (int i = 0; i < c->n; i++)
			if (c->pid[i] > 0 && waitpid(c->pid[i], NULL, WNOHANG) == c->pid[i]) {
				fprintf(stderr,
					"    redis-server %d exited at start (see %s/n%d)\n", i,
					c->dir, i);
				c->pid[i] = 0;
				return false;
			}
		usleep(10000);
	}
	if (!up) {
		fprintf(stderr, "    the cluster's servers did not answer within 5 s\n");
		return false;
	}
	addrs = calloc(1, 32 * (size_t)c->n + 1);
	if (!addrs)
		return false;
	off = 0;
	for (int i = 0; i < c->n; i++)
		off += (size_t)sprintf(addrs + off, "127.0.0.1:%u ", c->port[i]);
	if (redis_cluster_tcp_cli(c, &out,
				  "--cluster create %s --cluster-replicas %d --cluster-yes", addrs,
				  replicas)) {
		fprintf(stderr, "    redis-cli --cluster create failed:\n%s\n", out ? out : "");
		free(out);
		free(addrs);
		return false;
	}
	free(out);
	free(addrs);
	if (!redis_cluster_wait_ok(c, 10000)) {
		fprintf(stderr, "    the cluster is not ok within 10 s\n");
		return false;
	}
	/* Every replica in sync with its master (a failover needs one). */
	for (int t = 0; t < 500; t++) {
		bool synced = true;

		for (int i = 0; i < c->n && synced; i++) {
			out = NULL;
			if (!redis_cluster_is_master(c, i))
				synced = !redis_cluster_cli(c, i, &out, "INFO replication") &&
					 out && strstr(out, "master_link_status:up");
			free(out);
		}
		if (synced)
			return true;
		usleep(10000);
	}
	fprintf(stderr, "    the replicas did not sync within 5 s\n");
	return false;
}

void redis_cluster_kill(struct redis_cluster *c, int i)
{
	if (c->pid[i] > 0) {
		kill(c->pid[i], SIGKILL);
		waitpid(c->pid[i], NULL, 0);
	}
	c->pid[i] = 0;
}

void redis_cluster_stop(struct redis_cluster *c)
{
	char cmd[128];

	for (int i = 0; i < c->n; i++)
		redis_cluster_kill(c, i);
	if (c->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c->dir);
		if (system(cmd))
			fprintf(stderr, "    couldn't remove %s\n", c->dir);
		c->dir[0] = '\0';
	}
}

static int vcli(const char *prefix, char **out, const char *fmt, va_list ap)
{
	char *args = NULL, *cmd = NULL;
	int ret;

	ret = vasprintf(&args, fmt, ap);
	if (ret < 0)
		return -1;
	ret = asprintf(&cmd, "%s %s", prefix, args);
	free(args);
	if (ret < 0)
		return -1;
	ret = rl_run(cmd, out, NULL);
	free(cmd);
	return ret;
}

int redis_cluster_cli(struct redis_cluster *c, int i, char **out, const char *fmt, ...)
{
	char prefix[160];
	va_list ap;
	int ret;

	snprintf(prefix, sizeof(prefix), "redis-cli -s '%s'", c->sock[i]);
	va_start(ap, fmt);
	ret = vcli(prefix, out, fmt, ap);
	va_end(ap);
	return ret;
}

int redis_cluster_tcp_cli(struct redis_cluster *c, char **out, const char *fmt, ...)
{
	char prefix[160];
	va_list ap;
	int ret;

	if (c->netns[0])
		snprintf(prefix, sizeof(prefix), "nsenter --net=/run/netns/%s redis-cli", c->netns);
	else
		snprintf(prefix, sizeof(prefix), "redis-cli");
	va_start(ap, fmt);
	ret = vcli(prefix, out, fmt, ap);
	va_end(ap);
	return ret;
}

int redis_cluster_master_of(struct redis_cluster *c, int from, unsigned int slot)
{
	char *out = NULL, *line, *save = NULL;
	int found = -1;

	/* CLUSTER NODES: "ID HOST:PORT@BUS FLAGS MASTER PING PONG EPOCH LINK SLOT-RANGE..." */
	if (redis_cluster_cli(c, from, &out, "CLUSTER NODES") || !out) {
		free(out);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line && found < 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[64], *fs = NULL;
		unsigned int port;
		int nf = 0;

		for (char *w = strtok_r(line, " ", &fs); w && nf < 64; w = strtok_r(NULL, " ", &fs))
			f[nf++] = w;
		if (nf < 9 || !strstr(f[2], "master") || strstr(f[2], "fail") ||
		    sscanf(strchr(f[1], ':') ? strchr(f[1], ':') + 1 : "", "%u", &port) != 1)
			continue;
		for (int k = 8; k < nf; k++) {
			unsigned int lo, hi;
			int got = sscanf(f[k], "%u-%u", &lo, &hi);

			if (got == 1)
				hi = lo;
			if (got >= 1 && f[k][0] != '[' && slot >= lo && slot <= hi)
				for (int i = 0; i < c->n; i++)
					if (c->port[i] == port)
						found = i;
		}
	}
	free(out);
	return found;
}

bool redis_cluster_is_master(struct redis_cluster *c, int i)
{
	char *out = NULL;
	bool m = !redis_cluster_cli(c, i, &out, "ROLE") && out && !strncmp(out, "master", 6);

	free(out);
	return m;
}

long redis_cluster_dbsize(struct redis_cluster *c, int i)
{
	char *out = NULL;
	long n = -1;

	if (!redis_cluster_cli(c, i, &out, "DBSIZE") && out)
		n = atol(out);
	free(out);
	return n;
}

bool redis_cluster_wait_ok(struct redis_cluster *c, int ms)
{
	for (int t = 0; t <= ms / 20; t++) {
		bool ok = true;

		for (int i = 0; i < c->n && ok; i++) {
			char *out = NULL;

			if (c->pid[i] <= 0)
				continue;
			ok = !redis_cluster_cli(c, i, &out, "CLUSTER INFO") && out &&
			     strstr(out, "cluster_state:ok");
			free(out);
		}
		if (ok)
			return true;
		usleep(20000);
	}
	return false;
}
