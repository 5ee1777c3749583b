/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A Redis Cluster of the test's own (Debian's redis-server and redis-cli):
 * MASTERS masters and REPLICAS replicas of each, every server in its own
 * directory under one temporary directory, on loopback TCP (a cluster needs
 * it: its bus is the port + 10000) and on a unix socket DIR/nI.sock that
 * reaches it from any network namespace; no persistence. In @netns (a name
 * of ip netns, on that namespace's loopback: the fixed ports 7001...) or in
 * the test's own (free ports). "redis-cli --cluster create" joins them. The
 * servers die with the test runner (PR_SET_PDEATHSIG) and
 * redis_cluster_stop() removes them and the directory: call it on every path.
 */
#ifndef RL_REDIS_CLUSTER_H
#define RL_REDIS_CLUSTER_H

#include <stdbool.h>
#include <sys/types.h>

#define RL_CLUSTER_SRV_MAX 8

struct redis_cluster {
	char dir[64];
	char netns[32]; /* "": the test's namespace */
	int n; /* servers: masters first as created; roles change at a failover */
	unsigned int port[RL_CLUSTER_SRV_MAX];
	pid_t pid[RL_CLUSTER_SRV_MAX]; /* 0: not running */
	char sock[RL_CLUSTER_SRV_MAX][96];
	char url[512]; /* cluster://127.0.0.1:PORT,... of every server */
	unsigned int node_timeout_ms;
};

/*
 * Start @masters masters with @replicas replicas each (at most 8 servers) and
 * join them; true once every slot is served and every server says so.
 * @node_timeout_ms: cluster-node-timeout (a failover takes about twice it).
 */
bool redis_cluster_start(struct redis_cluster *c, int masters, int replicas,
			 unsigned int node_timeout_ms, const char *netns);
/* Stop every server and remove the directory; safe on a failed start and twice. */
void redis_cluster_stop(struct redis_cluster *c);
/* SIGKILL server @i (its directory stays). */
void redis_cluster_kill(struct redis_cluster *c, int i);
/* Run "redis-cli -s SOCK(@i) ARGS"; its output in *@out if @out. The exit status. */
int redis_cluster_cli(struct redis_cluster *c, int i, char **out, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Run "redis-cli ARGS" in the cluster's namespace (TCP: --cluster commands). */
int redis_cluster_tcp_cli(struct redis_cluster *c, char **out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The server serving @slot as a master, by the view of server @from; -1 if none known. */
int redis_cluster_master_of(struct redis_cluster *c, int from, unsigned int slot);
/* Is server @i a master now (ROLE)? */
bool redis_cluster_is_master(struct redis_cluster *c, int i);
/* Keys server @i holds (DBSIZE); -1 if it does not answer. */
long redis_cluster_dbsize(struct redis_cluster *c, int i);
/* Until every running server says cluster_state:ok (at most @ms): true if they do. */
bool redis_cluster_wait_ok(struct redis_cluster *c, int ms);

#endif /* RL_REDIS_CLUSTER_H */
