// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A redis-server of the test's own: see redis_srv.h. */
#include <errno.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include "redis_srv.h"
#include "test.h"

#define REDIS_SERVER "/usr/bin/redis-server"

bool redis_srv_available(void)
{
	return !access(REDIS_SERVER, X_OK) && !access("/usr/bin/redis-cli", X_OK);
}

bool redis_srv_need(void)
{
	if (redis_srv_available())
		return true;
	rl_test_skip("no redis-server (make deps installs it)");
	return false;
}

unsigned int redis_srv_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unsigned int port = 0;

	if (fd < 0)
		return 0;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static bool spawn(struct redis_srv *s)
{
	char port[16], log[128];
	pid_t pid;

	snprintf(port, sizeof(port), "%u", s->port);
	snprintf(log, sizeof(log), "%s/redis.log", s->dir);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		/* Dies with the runner, whatever kills it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(REDIS_SERVER, REDIS_SERVER, "--port", port, "--bind", "127.0.0.1",
		      "--unixsocket", s->sock, "--unixsocketperm", "700", "--dir", s->dir, "--save",
		      "", "--appendonly", "no", "--daemonize", "no", "--logfile", log,
		      "--enable-debug-command", "local", (char *)NULL);
		_exit(127);
	}
	s->pid = pid;
	/* Up once PING answers: at most 5 s. */
	for (int i = 0; i < 500; i++) {
		char *out = NULL;
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			s->pid = 0;
			fprintf(stderr, "    redis-server exited at start (see %s)\n", log);
			return false;
		}
		if (!access(s->sock, F_OK) && !redis_srv_cli(s, &out, "PING") && out &&
		    strstr(out, "PONG")) {
			free(out);
			return true;
		}
		free(out);
		usleep(10000);
	}
	fprintf(stderr, "    redis-server did not answer within 5 s\n");
	return false;
}

bool redis_srv_start(struct redis_srv *s, bool tcp)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "/tmp/rl-redis-XXXXXX");
	if (!mkdtemp(s->dir)) {
		s->dir[0] = '\0';
		return false;
	}
	snprintf(s->sock, sizeof(s->sock), "%s/redis.sock", s->dir);
	snprintf(s->url, sizeof(s->url), "unix://%s", s->sock);
	if (tcp) {
		s->port = redis_srv_free_port();
		if (!s->port)
			return false;
	}
	return spawn(s);
}

void redis_srv_kill(struct redis_srv *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
	if (s->sock[0])
		unlink(s->sock);
}

bool redis_srv_restart(struct redis_srv *s)
{
	redis_srv_kill(s);
	return spawn(s);
}

void redis_srv_stop(struct redis_srv *s)
{
	char cmd[128];

	redis_srv_kill(s);
	if (s->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
		if (system(cmd))
			fprintf(stderr, "    couldn't remove %s\n", s->dir);
		s->dir[0] = '\0';
	}
}

int redis_srv_cli(struct redis_srv *s, char **out, const char *fmt, ...)
{
	char *args = NULL, *cmd = NULL;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&args, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -1;
	ret = asprintf(&cmd, "redis-cli -s '%s' %s", s->sock, args);
	free(args);
	if (ret < 0)
		return -1;
	ret = rl_run(cmd, out, NULL);
	free(cmd);
	return ret;
}

int redis_srv_sleep(struct redis_srv *s, const char *secs)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char cmd[128];
	int fd, n;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", s->sock);
	n = snprintf(cmd, sizeof(cmd), "*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$%zu\r\n%s\r\n",
		     strlen(secs), secs);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || write(fd, cmd, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	/* The server reads it in its next loop: give it that. */
	usleep(20000);
	return fd;
}
