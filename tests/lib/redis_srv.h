/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A redis-server of the test's own (Debian's package): in a temporary
 * directory, listening on DIR/redis.sock (reachable from any network
 * namespace, through the file system) and, if asked, on a free loopback TCP
 * port; no persistence. It dies with the test runner (PR_SET_PDEATHSIG) and
 * redis_srv_stop() removes it and its directory: call it on every path.
 */
#ifndef RL_REDIS_SRV_H
#define RL_REDIS_SRV_H

#include <stdbool.h>
#include <sys/types.h>

struct redis_srv {
	char dir[64];
	char sock[96];
	unsigned int port; /* 0: no TCP */
	pid_t pid; /* 0: not running */
	char url[128]; /* unix://DIR/redis.sock */
};

/* Start it (@tcp: also on a loopback port); true once it answers PING. */
bool redis_srv_start(struct redis_srv *s, bool tcp);
/* Kill it (SIGKILL), keeping the directory, for a restart with redis_srv_restart(). */
void redis_srv_kill(struct redis_srv *s);
/* Start it again on the same socket and port (empty: no persistence). */
bool redis_srv_restart(struct redis_srv *s);
/* Stop it and remove its directory; safe on a failed start and twice. */
void redis_srv_stop(struct redis_srv *s);
/* Run "redis-cli -s SOCK ARGS"; its output in *out if @out. The exit status. */
int redis_srv_cli(struct redis_srv *s, char **out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Send DEBUG SLEEP @secs (text, "0.6") and return at once: the server stops
 * answering anyone for that long. An fd to close afterwards, or -1.
 */
int redis_srv_sleep(struct redis_srv *s, const char *secs);
/* A loopback TCP port nothing listens on (bound then closed), or 0. */
unsigned int redis_srv_free_port(void);
/* Is redis-server installed? */
bool redis_srv_available(void);
/* redis_srv_available(), or the running test skipped, saying why: false. */
bool redis_srv_need(void);

#endif /* RL_REDIS_SRV_H */
