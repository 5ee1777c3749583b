/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where fleet sync keeps its counts (issue #27): one Redis (redis://,
 * unix://), the master a group of Redis Sentinels watches (sentinel://:
 * user/lib/sync_sentinel.c), or a Redis Cluster (cluster://:
 * user/lib/sync_cluster.c). The agent (user/lib/sync_agent.c) sees one
 * store with one round trip per interval, whatever is behind it; each kind
 * does that round trip with the script of user/lib/sync_redis.c.
 */
#ifndef RL_SYNC_STORE_H
#define RL_SYNC_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sync_redis.h"

struct rl_sync_store;

/*
 * Connect (every server the kind needs), all of it within @timeout_ns; every
 * later round trip is bounded by @timeout_ns too (rl_sync_store_set_timeout()
 * changes it). 0, or -errno with a message naming the server and the cause;
 * -EINTR when @stop said so. @stop may be NULL.
 */
int rl_sync_store_open(const struct rl_redis_url *u, __u64 timeout_ns,
		       const struct rl_redis_stop *stop, struct rl_sync_store **out, char *err,
		       size_t errlen);
void rl_sync_store_close(struct rl_sync_store *s);
int rl_sync_store_set_timeout(struct rl_sync_store *s, __u64 timeout_ns);
/* Bytes sent and received over every connection of the store since it was opened. */
void rl_sync_store_bytes(const struct rl_sync_store *s, __u64 *tx, __u64 *rx);
/*
 * The round trip (rl_redis_sync(), or rl_cluster_sync() on a cluster):
 * report @items' units, get back their remote units, which are only this
 * node's, and the inbox (rep->inbox: free it with rl_sync_reply_free()).
 * -errno when the store failed (then close it: the agent falls back and
 * opens it again). 0 when the group's script answered; on a cluster some
 * buckets may still have failed (a master down): rep->failed, their items
 * marked failed, the first cause in @err.
 */
int rl_sync_store_sync(struct rl_sync_store *s, const struct rl_sync_req *req,
		       struct rl_sync_item *items, size_t n, struct rl_sync_reply *rep, char *err,
		       size_t errlen);
/*
 * The server(s) the store writes to now, for `stats` and the exporter:
 * "HOST:PORT" of the master (redis://, sentinel://), the socket's path, or
 * the cluster's masters, comma-separated (truncated to @len).
 */
void rl_sync_store_master(const struct rl_sync_store *s, char *buf, size_t len);

#endif /* RL_SYNC_STORE_H */
