/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Redis side of fleet sync (issue #14, docs/design.md "Fleet-wide limits"): the
 * URL, the connection and the one round trip per interval, an EVALSHA of the
 * script below. No kernel access: the tests and the bench drive it with
 * synthetic sources against a real redis-server.
 *
 * Keys, all under the hash tag of the group so that they share a cluster slot:
 *   rl:{GROUP}:nodes         hash node -> last round trip (server time, ms)
 *   rl:{GROUP}:policy        hash node -> that node's policy text
 *   rl:{GROUP}:t:EPOCH       hash source -> units all nodes passed, summed
 *   rl:{GROUP}:l:NODE:EPOCH  hash source -> that sum when NODE last asked
 *   rl:{GROUP}:s:NODE:EPOCH  hash source -> when NODE last asked (ms)
 * EPOCH is the server's time divided by the TTL (see the script). The nodes'
 * keys expire after the TTL, the sources' hashes 2 TTL after their last
 * write, so idle sources and gone nodes disappear by themselves.
 */
#ifndef RL_SYNC_REDIS_H
#define RL_SYNC_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Servers a sentinel:// or cluster:// URL may list. */
#define RL_REDIS_ADDRS_MAX 16

enum rl_redis_kind {
	RL_REDIS_TCP = 0, /* redis://[:PASSWORD@]HOST:PORT[/DB] */
	RL_REDIS_UNIX = 1, /* unix://[:PASSWORD@]/PATH */
	RL_REDIS_SENTINEL = 2, /* sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER */
	RL_REDIS_CLUSTER = 3, /* cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT...] */
};

struct rl_redis_addr {
	char host[256]; /* a name, an IPv4 address, or an IPv6 one (given in brackets) */
	unsigned int port;
};

/* What --redis names. */
struct rl_redis_url {
	enum rl_redis_kind kind;
	bool is_unix; /* kind == RL_REDIS_UNIX */
	char host[256]; /* TCP: the server; sentinel, cluster: addrs[0] */
	unsigned int port;
	char path[108]; /* sun_path */
	char password[256]; /* empty: no AUTH (sentinel: the master's password) */
	unsigned int db;
	/* sentinel: the sentinels; cluster: the nodes to start from. */
	struct rl_redis_addr addrs[RL_REDIS_ADDRS_MAX];
	unsigned int naddrs;
	char master[64]; /* sentinel: the master's name */
};

int rl_redis_url_parse(const char *s, struct rl_redis_url *u, char *err, size_t errlen);
/* The URL without its password, for messages. */
void rl_redis_url_str(const struct rl_redis_url *u, char *buf, size_t len);

/* Longest group and node names (they are parts of keys and of the status record). */
#define RL_SYNC_NAME_MAX 63
/* A source as text ("2001:db8:1234:5678::/64"). */
#define RL_SYNC_SRC_MAX 48

struct rl_redis;

/*
 * Asked at least every 50 ms while the agent waits for the server: true ends
 * the wait (connect, round trip) with -EINTR, so that a SIGTERM is never
 * held up by a server that answers slowly or not at all.
 */
struct rl_redis_stop {
	bool (*fn)(void *ctx);
	void *ctx;
};

/*
 * Connect, AUTH, SELECT and load the script, all of it within @timeout_ns.
 * Every later exchange (a command and its reply, sent and read whole) must
 * end within @timeout_ns too: the bound is on the whole exchange, not on
 * each read, so a server trickling a reply cannot stretch it. 0, or -errno
 * with a message naming the server and the cause (refused, timed out, wrong
 * password, ...); -EINTR when @stop said so. @stop may be NULL.
 */
int rl_redis_connect(const struct rl_redis_url *u, __u64 timeout_ns,
		     const struct rl_redis_stop *stop, struct rl_redis **out, char *err,
		     size_t errlen);
/*
 * The same, to the server @host:@port (a sentinel, a cluster node; @u gives
 * the password), with @flags: RL_REDIS_NO_SCRIPT (no SELECT, no SCRIPT LOAD:
 * a sentinel, or a node asked only for its role or its slots),
 * RL_REDIS_NO_AUTH (no AUTH: sentinels without a password of their own).
 */
#define RL_REDIS_NO_SCRIPT 1U
#define RL_REDIS_NO_AUTH   2U
int rl_redis_connect_to(const struct rl_redis_url *u, const char *host, unsigned int port,
			unsigned int flags, __u64 timeout_ns, const struct rl_redis_stop *stop,
			struct rl_redis **out, char *err, size_t errlen);
void rl_redis_close(struct rl_redis *r);
/* "HOST:PORT" ([IPv6]:PORT) into @buf. */
void rl_redis_addr_str(const char *host, unsigned int port, char *buf, size_t len);
/* The server as messages name it (its URL or HOST:PORT, no password). */
const char *rl_redis_name(const struct rl_redis *r);
/*
 * One command (@argv, NUL-terminated strings) and its reply, sent and read
 * whole within the connection's bound. Arrays may nest (ROLE, CLUSTER SLOTS),
 * none longer than @max_elements; the reply takes at most 64 KiB + 64 bytes
 * per element. An error reply is a reply (REDIS_REPLY_ERROR): the caller
 * tells. 0 and *@out (freeReplyObject()), or -errno with @err, the
 * connection then unusable (close it).
 */
struct redisReply;
int rl_redis_command(struct rl_redis *r, int argc, const char **argv, size_t max_elements,
		     struct redisReply **out, char *err, size_t errlen);
/*
 * SUBSCRIBE to @channel (a Sentinel's +switch-master) and read the
 * confirmation, within the connection's bound: from then on the connection
 * only carries the channel's messages, read by rl_redis_message(). 0, or
 * -errno (-EACCES: NOAUTH) with @err.
 */
int rl_redis_subscribe(struct rl_redis *r, const char *channel, char *err, size_t errlen);
/*
 * A message of the subscription, without waiting: 1 and *@out
 * (["message", CHANNEL, PAYLOAD], freeReplyObject()) when one has come whole,
 * 0 when none has (yet), -errno with @err when the connection failed or sent
 * what is not a message (close it). Reads at most 64 KiB per call.
 */
int rl_redis_message(struct rl_redis *r, struct redisReply **out, char *err, size_t errlen);
/* The bound of every later exchange. */
int rl_redis_set_timeout(struct rl_redis *r, __u64 timeout_ns);
/* Bytes sent and received since the connection was made (RESP as on the wire). */
void rl_redis_bytes(const struct rl_redis *r, __u64 *tx, __u64 *rx);

/* One source of a round trip: in, the units passed here; out, those passed elsewhere. */
struct rl_sync_item {
	char src[RL_SYNC_SRC_MAX];
	__u64 units;
	__u64 remote;
};

struct rl_sync_req {
	const char *group, *node;
	const char *policy; /* this node's policy text */
	__u64 ttl_ms; /* expiry of every key touched; also how long a node stays live */
	__u64 stale_ms; /* a node that had not synced a source for longer gets no remote units */
};

struct rl_sync_reply {
	__u64 nodes; /* live nodes of the group, this one included */
	/* The first live node with another policy ("": none) and its policy text. */
	char other_node[RL_SYNC_NAME_MAX + 1];
	char other_policy[1024];
	__u64 shared; /* items with remote units */
	__u64 commands; /* Redis commands this round trip sent (EVALSHA, + reload) */
};

/*
 * The round trip: report @items' units, get back their remote units. -errno
 * with a message on failure (the connection is then unusable: close it;
 * -EROFS: the server is a replica, which answers READONLY). A
 * server that forgot the script (restarted) is sent it again and asked again.
 * A reply is refused (-EPROTO, no item gets any remote units) when it is
 * larger than the request can be answered with (64 KiB + 48 bytes per item:
 * see sync_redis.c), is not the script's shape, names a source twice or one
 * not asked for, or comes with bytes the request did not ask for (a doubled
 * reply); -ETIMEDOUT when the whole exchange overran its bound.
 */
int rl_redis_sync(struct rl_redis *r, const struct rl_sync_req *req, struct rl_sync_item *items,
		  size_t n, struct rl_sync_reply *rep, char *err, size_t errlen);

/*
 * The first line where two policy texts differ, as "KEY: MINE here, THEIRS on
 * NODE" in @buf. false if they are equal.
 */
bool rl_sync_policy_diff(const char *mine, const char *theirs, const char *node, char *buf,
			 size_t len);

#endif /* RL_SYNC_REDIS_H */
