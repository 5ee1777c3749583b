// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A master, its replica and three Sentinels of the test's own: see sentinel_srv.h. */
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include "redis_srv.h"
#include "sentinel_srv.h"
#include "test.h"

#define REDIS_SERVER   "/usr/bin/redis-server"
#define REDIS_SENTINEL "/usr/bin/redis-sentinel"

bool sentinel_srv_available(void)
{
	return redis_srv_available() && !access(REDIS_SENTINEL, X_OK);
}

/* Fork and exec @argv in the servers' namespace; the child dies with the runner. */
static pid_t spawn(struct sentinel_srv *s, char *const argv[])
{
	pid_t pid = fork();

	if (pid)
		return pid < 0 ? 0 : pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (s->netns[0]) {
		char path[128];
		int fd;

		snprintf(path, sizeof(path), "/run/netns/%s", s->netns);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET))
			_exit(126);
	}
	/* Their logs are in the directory; nothing on the runner's output. */
	{
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
	}
	execv(argv[0], argv);
	_exit(127);
}

int sentinel_srv_cli(struct sentinel_srv *s, unsigned int port, bool auth, char **out,
		     const char *fmt, ...)
{
	char *args = NULL, *cmd = NULL, ns[96] = "", pw[96] = "";
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&args, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -1;
	if (s->netns[0])
		snprintf(ns, sizeof(ns), "nsenter --net=/run/netns/%s ", s->netns);
	if (auth && s->password[0])
		snprintf(pw, sizeof(pw), "-a '%s' --no-auth-warning ", s->password);
	/* Bounded: a stopped server never answers. */
	ret = asprintf(&cmd, "%stimeout -k 1 3 redis-cli -h 127.0.0.1 -p %u %s%s", ns, port, pw,
		       args);
	free(args);
	if (ret < 0)
		return -1;
	ret = rl_run(cmd, out, NULL);
	free(cmd);
	return ret;
}

/* Does the server on @port answer PING (within its wait)? */
static bool pings(struct sentinel_srv *s, unsigned int port, bool auth)
{
	char *out = NULL;
	bool ok = !sentinel_srv_cli(s, port, auth, &out, "PING") && out && strstr(out, "PONG");

	free(out);
	return ok;
}

static bool start_redis(struct sentinel_srv *s, int i)
{
	char port[16], log[128], rdb[16], master[16];
	char *argv[32];
	int n = 0;

	snprintf(port, sizeof(port), "%u", s->port[i]);
	snprintf(log, sizeof(log), "%s/redis%d.log", s->dir, i);
	snprintf(rdb, sizeof(rdb), "redis%d.rdb", i);
	snprintf(master, sizeof(master), "%u", s->port[0]);
	argv[n++] = REDIS_SERVER;
	argv[n++] = "--port";
	argv[n++] = port;
	argv[n++] = "--bind";
	argv[n++] = "127.0.0.1";
	argv[n++] = "--dir";
	argv[n++] = s->dir;
	argv[n++] = "--dbfilename";
	argv[n++] = rdb;
	argv[n++] = "--save";
	argv[n++] = "";
	argv[n++] = "--appendonly";
	argv[n++] = "no";
	argv[n++] = "--daemonize";
	argv[n++] = "no";
	argv[n++] = "--logfile";
	argv[n++] = log;
	/* A replica's first sync at once, not after the default 5 s. */
	argv[n++] = "--repl-diskless-sync-delay";
	argv[n++] = "0";
	if (s->password[0]) {
		argv[n++] = "--requirepass";
		argv[n++] = s->password;
		argv[n++] = "--masterauth";
		argv[n++] = s->password;
	}
	if (i) {
		argv[n++] = "--replicaof";
		argv[n++] = "127.0.0.1";
		argv[n++] = master;
	}
	argv[n] = NULL;
	s->pid[i] = spawn(s, argv);
	return s->pid[i] > 0;
}

static bool start_sentinel(struct sentinel_srv *s, int i)
{
	char conf[128], log[128];
	char *argv[] = { REDIS_SENTINEL, conf, NULL };
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/sentinel%d.conf", s->dir, i);
	snprintf(log, sizeof(log), "%s/sentinel%d.log", s->dir, i);
	f = fopen(conf, "w");
	if (!f)
		return false;
	/* The sentinel rewrites this file as it learns: it must be its own, writable. */
	fprintf(f,
		"port %u\nbind 127.0.0.1\ndaemonize no\nlogfile %s\ndir %s\n"
		"sentinel monitor " SENTINEL_SRV_MASTER " 127.0.0.1 %u 2\n"
		"sentinel down-after-milliseconds " SENTINEL_SRV_MASTER " 1000\n"
		"sentinel failover-timeout " SENTINEL_SRV_MASTER " 3000\n"
		"sentinel parallel-syncs " SENTINEL_SRV_MASTER " 1\n",
		s->sport[i], log, s->dir, s->port[0]);
	if (s->password[0])
		fprintf(f, "sentinel auth-pass " SENTINEL_SRV_MASTER " %s\n", s->password);
	/* Sentinels with a password of their own: the others need it to ask them. */
	if (s->sentinel_pw)
		fprintf(f, "requirepass %s\nsentinel sentinel-pass %s\n", s->password, s->password);
	fclose(f);
	s->spid[i] = spawn(s, argv);
	return s->spid[i] > 0;
}

/* Until @port answers PING, at most 5 s, or its process @pid has exited. */
static bool wait_up(struct sentinel_srv *s, pid_t *pid, unsigned int port, bool auth)
{
	for (double t0 = rl_test_mono(); rl_test_mono() - t0 < 5; usleep(20000)) {
		int st;

		if (waitpid(*pid, &st, WNOHANG) == *pid) {
			*pid = 0;
			fprintf(stderr, "    a server on port %u exited at start (logs in %s)\n",
				port, s->dir);
			return false;
		}
		if (pings(s, port, auth))
			return true;
	}
	fprintf(stderr, "    the server on port %u did not answer within 5 s\n", port);
	return false;
}

bool sentinel_srv_start(struct sentinel_srv *s, const char *netns, const char *password,
			bool sentinel_pw)
{
	char *out = NULL;
	size_t off;
	bool ok = false;

	memset(s, 0, sizeof(*s));
	snprintf(s->netns, sizeof(s->netns), "%s", netns ? netns : "");
	snprintf(s->password, sizeof(s->password), "%s", password ? password : "");
	s->sentinel_pw = sentinel_pw && s->password[0];
	snprintf(s->dir, sizeof(s->dir), "/tmp/rl-sentinel-XXXXXX");
	if (!mkdtemp(s->dir)) {
		s->dir[0] = '\0';
		return false;
	}
	for (int i = 0; i < 2 + SENTINEL_SRV_N; i++) {
		/* A namespace of the test's own has nothing else on loopback. */
		unsigned int p = s->netns[0] ? (unsigned int)(i < 2 ? 6379 + i : 26379 + i - 2) :
					       redis_srv_free_port();

		for (int j = 0; j < i; j++)
			if (p == (j < 2 ? s->port[j] : s->sport[j - 2]))
				p = 0;
		if (!p)
			return false;
		if (i < 2)
			s->port[i] = p;
		else
			s->sport[i - 2] = p;
	}
	if (!start_redis(s, 0) || !wait_up(s, &s->pid[0], s->port[0], true) || !start_redis(s, 1) ||
	    !wait_up(s, &s->pid[1], s->port[1], true))
		return false;
	/*
	 * The sentinels learn the replicas from the master's INFO, the first one
	 * as they connect and then every 10 s: start them once the master lists
	 * the replica, so they know it at once.
	 */
	for (double t0 = rl_test_mono(); !ok && rl_test_mono() - t0 < 5; usleep(20000)) {
		free(out);
		out = NULL;
		ok = !sentinel_srv_cli(s, s->port[0], true, &out, "INFO replication") && out &&
		     strstr(out, "slave0:");
	}
	free(out);
	if (!ok) {
		fprintf(stderr, "    the replica did not reach the master within 5 s\n");
		return false;
	}
	for (int i = 0; i < SENTINEL_SRV_N; i++)
		if (!start_sentinel(s, i))
			return false;
	for (int i = 0; i < SENTINEL_SRV_N; i++)
		if (!wait_up(s, &s->spid[i], s->sport[i], s->sentinel_pw))
			return false;
	off = (size_t)snprintf(s->url, sizeof(s->url), "sentinel://");
	if (s->password[0])
		off += (size_t)snprintf(s->url + off, sizeof(s->url) - off, ":%s@", s->password);
	for (int i = 0; i < SENTINEL_SRV_N; i++)
		off += (size_t)snprintf(s->url + off, sizeof(s->url) - off, "%s127.0.0.1:%u",
					i ? "," : "", s->sport[i]);
	snprintf(s->url + off, sizeof(s->url) - off, "/" SENTINEL_SRV_MASTER);
	return true;
}

/* The value of @field in "SENTINEL master" output (field and value on lines of their own). */
static long field(const char *out, const char *name)
{
	size_t n = strlen(name);
	char pat[64];
	const char *p;

	if (!out)
		return -1;
	snprintf(pat, sizeof(pat), "\n%s\n", name);
	if (!strncmp(out, name, n) && out[n] == '\n')
		p = out + n + 1;
	else if ((p = strstr(out, pat)))
		p += strlen(pat);
	return p ? strtol(p, NULL, 10) : -1;
}

bool sentinel_srv_ready(struct sentinel_srv *s, double secs)
{
	int running = 0;

	for (int i = 0; i < SENTINEL_SRV_N; i++)
		running += s->spid[i] > 0 && !s->paused[i];
	for (double t0 = rl_test_mono(); rl_test_mono() - t0 < secs; usleep(100000)) {
		bool ok = true;

		for (int i = 0; i < SENTINEL_SRV_N && ok; i++) {
			char *out = NULL;

			if (s->spid[i] <= 0 || s->paused[i])
				continue;
			ok = !sentinel_srv_cli(s, s->sport[i], s->sentinel_pw, &out,
					       "SENTINEL master " SENTINEL_SRV_MASTER) &&
			     field(out, "num-slaves") >= 1 &&
			     field(out, "num-other-sentinels") >= running - 1;
			free(out);
		}
		if (ok)
			return true;
	}
	return false;
}

int sentinel_srv_master(struct sentinel_srv *s, int from)
{
	char *out = NULL;
	unsigned int port = 0;
	const char *nl;

	if (!sentinel_srv_cli(s, s->sport[from], s->sentinel_pw, &out,
			      "SENTINEL get-master-addr-by-name " SENTINEL_SRV_MASTER) &&
	    out && (nl = strchr(out, '\n')))
		port = (unsigned int)strtoul(nl + 1, NULL, 10);
	free(out);
	return port == s->port[0] ? 0 : port == s->port[1] ? 1 : -1;
}

double sentinel_srv_named_at(struct sentinel_srv *s)
{
	double first = 0;

	for (int i = 0; i < SENTINEL_SRV_N; i++) {
		char path[128], line[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/sentinel%d.log", s->dir, i);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			/* "PID:X 04 Dec 2026 15:53:40.157 # +failover-state-reconf-slaves ..." */
			struct tm tm = { .tm_isdst = -1 };
			const char *p = strchr(line, ' ');
			char *end;
			double t;

			if (!strstr(line, "+failover-state-reconf-slaves") || !p)
				continue;
			end = strptime(p + 1, "%d %b %Y %H:%M:%S", &tm);
			if (!end || *end != '.')
				continue;
			/* The log is in local time, as mktime() takes it. */
			t = (double)mktime(&tm) + strtod(end, NULL);
			if (!first || t < first)
				first = t;
		}
		if (f)
			fclose(f);
	}
	return first;
}

bool sentinel_srv_role(struct sentinel_srv *s, int i, char *buf, size_t len)
{
	char *out = NULL;
	bool ok = !sentinel_srv_cli(s, s->port[i], true, &out, "ROLE") && out && *out != '\n';

	if (ok)
		snprintf(buf, len, "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
	return ok;
}

void sentinel_srv_kill(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

void sentinel_srv_stop(struct sentinel_srv *s)
{
	char cmd[128];

	for (int i = 0; i < SENTINEL_SRV_N; i++)
		sentinel_srv_kill(&s->spid[i]);
	for (int i = 0; i < 2; i++)
		sentinel_srv_kill(&s->pid[i]);
	if (s->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
		if (system(cmd))
			fprintf(stderr, "    couldn't remove %s\n", s->dir);
		s->dir[0] = '\0';
	}
}
