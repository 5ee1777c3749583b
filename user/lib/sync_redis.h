/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Redis side of fleet sync (issues #14, #27; docs/design.md "Fleet-wide
 * limits"): the URL, the connection, and the round trip of an interval, the
 * two scripts below run by EVALSHA. No kernel access: the tests and the bench
 * drive it with synthetic sources against a real redis-server.
 *
 * Keys. The group's own, under its hash tag {GROUP}:
 *   rl:{GROUP}:nodes           hash node -> last round trip (server time, ms)
 *   rl:{GROUP}:policy          hash node -> that node's policy text
 * and the sources', spread over B buckets by a hash of their text
 * (rl_sync_src_hash() % B: 1 bucket on one Redis, RL_CLUSTER_BUCKETS on a
 * cluster), each bucket under a hash tag of its own, TAG (the store names it:
 * "GROUP:b", or with a suffix that spreads the buckets over the hash slots),
 * so that a bucket's keys share one cluster slot and one script sees them all:
 *   rl:{TAG}:d:E               hash, epoch E of the TTL: source -> units all nodes
 *                              passed, summed (for a shared source); and each
 *                              node's inbox, "\ni:NODE" -> "FIRST LAST" and
 *                              "\ni:NODE:SEQ" -> chunks of "BASE TIME SOURCE"
 *                              lines: the sources NODE claimed that another node
 *                              reported since
 *   rl:{TAG}:l:NODE:E          hash source -> that sum when NODE last asked
 *   rl:{TAG}:s:NODE:E          hash source -> when (ms)
 *   rl:{TAG}:o:F               hash, epoch F of the claim time: source -> NODE (only
 *                              NODE has reported it: a claim) or "* NODE:T NODE:T..."
 *                              (shared: the nodes reporting it, and when, to a
 *                              quarter of a TTL)
 *   rl:{TAG}:m                 hash "" -> the bucket's id
 * Every hash has a field "" so that it exists from its epoch's first round
 * (see the script: a slot migrating). d:E, l and s of E expire at the end of
 * epoch E + 1, o:F at the end of F + 1, m after two claim times unused: idle
 * sources, gone nodes and a gone group disappear by themselves.
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
 * Connect, AUTH, SELECT and load the scripts, all of it within @timeout_ns.
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

/*
 * The buckets a group's sources are spread over (see the keys above): at
 * most this many, so that a round's failed buckets fit a 64-bit mask.
 */
#define RL_SYNC_BUCKETS_MAX 64
/*
 * A source's hash (FNV-1a, 32 bits, of its text): its bucket is this modulo
 * the number of buckets, the same on every node of a group.
 */
__u32 rl_sync_src_hash(const char *src);

/* One source of a round trip: in, the units passed here; out, those passed elsewhere. */
struct rl_sync_item {
	char src[RL_SYNC_SRC_MAX];
	__u64 units;
	__u64 remote;
	/*
	 * In: the agent holds this source as claimed (only this node has it:
	 * the fallback share does not charge it). Out: only this node has
	 * reported it, so it is claimed for this node and need not be sent
	 * again until its claim is due (issue #27, "only what is shared costs").
	 */
	bool local;
	/* In: the agent holds it as shared (the script skips what only a claim needs). */
	bool shared;
	/* Out: its bucket's script failed this round: no remote units, nothing learned. */
	bool failed;
};

struct rl_sync_req {
	const char *group, *node;
	const char *policy; /* this node's policy text */
	__u64 ttl_ms; /* expiry of every key touched; also how long a node stays live */
	__u64 stale_ms; /* a node that had not synced a source for longer gets no remote units */
	/*
	 * How long a claim lasts: a source claimed by this node alone is sent
	 * again (claimed again) well within it, or another node reporting it
	 * would take it for its own.
	 */
	__u64 claim_ms;
	/* Register and compare the policies only (the first round; while they differ). */
	bool group_only;
};

struct rl_sync_reply {
	__u64 nodes; /* live nodes of the group, this one included */
	/* The first live node with another policy ("": none) and its policy text. */
	char other_node[RL_SYNC_NAME_MAX + 1];
	char other_policy[1024];
	__u64 shared; /* sources with remote units (items and inbox) */
	__u64 local; /* items only this node has reported */
	__u64 commands; /* Redis commands sent: EVALSHA, ASKING, SCRIPT LOAD */
	__u64 exchanges; /* round trips with a server: one per server, more after a redirection */
	__u64 moved, ask, tryagain; /* redirections followed, retries of a slot migrating */
	__u64 remapped; /* slots on another master when the slot map was read again */
	/*
	 * Sources this node had claimed that another node has reported since
	 * this node last asked: they are shared from now on, with the units the
	 * others passed since (remote). Not in the request; malloc'd (free it
	 * with rl_sync_reply_free()).
	 */
	struct rl_sync_item *inbox;
	size_t ninbox;
	unsigned int nbuckets;
	/* Bit b: bucket b's script failed this round (its items are marked failed). */
	__u64 failed;
	/*
	 * Each bucket's id as this round read it (a hash of it; 0: not read).
	 * A new id means the bucket's keys were lost (a restart, a flush): its
	 * claims with them, so the agent claims its sources again.
	 */
	__u64 bucket_id[RL_SYNC_BUCKETS_MAX];
};

/* Free what a round trip allocated in @rep (its inbox); safe twice. */
void rl_sync_reply_free(struct rl_sync_reply *rep);

/*
 * The round trip against one server: the group's script, then (unless
 * req->group_only) one bucket's, pipelined in one exchange: report @items'
 * units, get back their remote units and which are only this node's, and the
 * inbox. -errno with a message on failure (the connection is then unusable:
 * close it; -EROFS: the server is a replica, which answers READONLY). A
 * server that forgot the scripts (restarted) is sent them again and asked
 * again. A reply is refused (-EPROTO, no item gets any remote units) when it
 * is larger than the request can be answered with (see sync_redis.c), is not
 * the script's shape, names a source twice or one not asked for, or comes
 * with bytes the request did not ask for (a doubled
 * reply); -ETIMEDOUT when the whole exchange overran its bound.
 */
int rl_redis_sync(struct rl_redis *r, const struct rl_sync_req *req, struct rl_sync_item *items,
		  size_t n, struct rl_sync_reply *rep, char *err, size_t errlen);

/*
 * Where a round's commands go, for a store of several servers (a cluster:
 * user/lib/sync_cluster.c). rl_sync_round() asks it:
 *	tag		the hash tag of bucket @b's keys (-1: the group's)
 *	conn		the connection serving bucket @b (-1: the group), or NULL
 *			with a message: that bucket fails this round
 *	redirect	a MOVED (@ask false) or ASK for bucket @b to @addr
 *			("HOST:PORT" as the server wrote it): the connection to ask
 *			instead, or NULL with a message
 *	broken		@r failed (timed out, closed, a protocol error): never use
 *			it again (the router closes it)
 */
struct rl_sync_router {
	unsigned int nbuckets;
	const char *(*tag)(void *ctx, int b);
	struct rl_redis *(*conn)(void *ctx, int b, char *err, size_t errlen);
	struct rl_redis *(*redirect)(void *ctx, int b, bool ask, const char *addr, char *err,
				     size_t errlen);
	void (*broken)(void *ctx, struct rl_redis *r);
	void *ctx;
};

/*
 * The round trip over @rt's servers, all of it within @timeout_ns: the
 * commands to one server pipelined in one exchange, the servers' exchanges
 * at once. MOVED and ASK are followed (ASKING before the command asked
 * again), TRYAGAIN (a slot migrating) asked again after a few ms, as long as
 * the bound leaves time. 0 when the group's script answered (some buckets
 * may have failed: rep->failed, and the first cause in @err); -errno with
 * @err when it did not (the agent falls back).
 */
int rl_sync_round(const struct rl_sync_router *rt, const struct rl_sync_req *req,
		  struct rl_sync_item *items, size_t n, struct rl_sync_reply *rep, __u64 timeout_ns,
		  char *err, size_t errlen);

/*
 * The first line where two policy texts differ, as "KEY: MINE here, THEIRS on
 * NODE" in @buf. false if they are equal.
 */
bool rl_sync_policy_diff(const char *mine, const char *theirs, const char *node, char *buf,
			 size_t len);

#endif /* RL_SYNC_REDIS_H */
