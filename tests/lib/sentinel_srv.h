/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A Redis master, its replica and three Sentinels watching them (master
 * name "rlt"), of the test's own: Debian's redis-server and redis-sentinel,
 * on loopback TCP ports of a network namespace the test made (fixed ports:
 * nothing else listens there) or of the host's (free ports), in a temporary
 * directory, without persistence. Tuned to fail over in 2-3 s: a master is
 * down after 1 s without an answer (down-after-milliseconds; 500 ms made the
 * sentinels fail over by themselves on the loaded 2-CPU test machine), a
 * replica syncs without the default 5 s wait (repl-diskless-sync-delay 0).
 *
 * Every process dies with the test runner (PR_SET_PDEATHSIG) and
 * sentinel_srv_stop() kills and reaps them all and removes the directory:
 * call it on every path (also after a failed start).
 */
#ifndef RL_SENTINEL_SRV_H
#define RL_SENTINEL_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SENTINEL_SRV_N	    3
#define SENTINEL_SRV_MASTER "rlt"

struct sentinel_srv {
	char netns[48]; /* the network namespace they run in; "": the host's */
	char dir[64];
	char password[32]; /* the redis-servers' ("": none) */
	bool sentinel_pw; /* the sentinels require it too */
	/* redis-server 0 (the first master) and 1 (its replica): pid 0 once reaped */
	unsigned int port[2];
	pid_t pid[2];
	unsigned int sport[SENTINEL_SRV_N];
	pid_t spid[SENTINEL_SRV_N];
	bool paused[SENTINEL_SRV_N]; /* SIGSTOPped by the test: sentinel_srv_ready() skips it */
	char url[256]; /* sentinel://[:PASSWORD@]127.0.0.1:S0,127.0.0.1:S1,127.0.0.1:S2/rlt */
};

/* Are redis-server, redis-sentinel and redis-cli installed? */
bool sentinel_srv_available(void);
/*
 * Start them in /run/netns/@netns (NULL: the host's), @password on both
 * redis-servers ("" or NULL: none) and, if @sentinel_pw, on the sentinels;
 * true once all answer, the replica following the master.
 */
bool sentinel_srv_start(struct sentinel_srv *s, const char *netns, const char *password,
			bool sentinel_pw);
/*
 * Wait (at most @secs) until every sentinel running and not paused knows the
 * replica and the others: from then on they can agree on a failover.
 */
bool sentinel_srv_ready(struct sentinel_srv *s, double secs);
/* The redis-server (0 or 1) sentinel @from names as the master; -1 if it names none of them. */
int sentinel_srv_master(struct sentinel_srv *s, int from);
/*
 * When a sentinel first named the promoted replica as master, as the leader
 * logged it (the failover state from which SENTINEL get-master-addr-by-name
 * answers the promoted replica), in seconds of CLOCK_REALTIME; 0 if none
 * did. Read from the logs: no process, and no polling delay.
 */
double sentinel_srv_named_at(struct sentinel_srv *s);
/* The first word of redis-server @i's ROLE ("master", "slave") into @buf; false if none. */
bool sentinel_srv_role(struct sentinel_srv *s, int i, char *buf, size_t len);
/*
 * "redis-cli -p @port ARGS" in their namespace (with the password if @auth);
 * its output in *@out if @out. The exit status.
 */
int sentinel_srv_cli(struct sentinel_srv *s, unsigned int port, bool auth, char **out,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* SIGKILL process *@pid (one of theirs) and reap it; *@pid is 0 afterwards. */
void sentinel_srv_kill(pid_t *pid);
/* Kill and reap every process (stopped ones too), remove the directory; safe twice. */
void sentinel_srv_stop(struct sentinel_srv *s);

#endif /* RL_SENTINEL_SRV_H */
