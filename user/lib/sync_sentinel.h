/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The store of sentinel:// (issue #27; docs/design.md, "Fleet-wide limits"):
 * the master that a group of Redis Sentinels watches, followed through a
 * failover. The round trip itself is sync_redis.c's; this unit finds the
 * master, checks it is one, and moves when it changes.
 *
 * Finding it, all within the one bound the store is given: each sentinel in
 * turn, starting with the one that answered last, each with an equal share
 * of what is left of the bound for itself and the master it names (one that
 * hangs costs its share, not the whole bound; one that refuses costs
 * nothing). A sentinel is first subscribed to (+switch-master, on a
 * connection of its own), then asked SENTINEL get-master-addr-by-name on a
 * second: a switch after the answer comes on the subscription. The master is
 * then connected to (AUTH with the URL's password, SCRIPT LOAD) and asked
 * ROLE: anything but "master" (a replica not promoted yet, a demoted master
 * the sentinels have not reconfigured yet) is refused, and the next sentinel
 * asked. So the store never writes to a replica; a master demoted under it
 * answers READONLY, which asks the sentinels again.
 *
 * Following a failover, in each round trip, within its bound: what the
 * subscription has brought is read without waiting; a +switch-master naming
 * this master moves the store to the new address (ROLE checked) before the
 * round trip. A round trip answered READONLY asks the sentinels again and is
 * tried once more. Any other failure is the agent's: it closes the store,
 * falls back (local or share) and opens it again at its next try, which asks
 * the sentinels again; so a master that dies is left as soon as a round trip
 * fails, and the new one is used as soon as a sentinel names it. A lost
 * subscription (its sentinel died) is made again on another sentinel, at
 * most once a second, after a round trip and with what is left of its bound;
 * that sentinel is also asked the master, in case a switch was missed.
 *
 * Passwords: the URL's is the master's (and its replicas'). Sentinels are
 * asked without AUTH (a sentinel has no password unless its own
 * configuration sets requirepass); one that answers NOAUTH is asked again
 * with the same password.
 */
#ifndef RL_SYNC_SENTINEL_H
#define RL_SYNC_SENTINEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sync_redis.h"

struct rl_sentinel;

/*
 * Find the master of @u (a sentinel:// URL) and connect to it, all within
 * @timeout_ns; every later round trip is bounded by @timeout_ns too. 0, or
 * -errno with a message naming each sentinel tried and its cause:
 * -ECONNREFUSED / -ETIMEDOUT no sentinel answered (or the master they name
 * did not), -ENOENT no sentinel knows a master of that name, -EAGAIN the
 * master named is not a master (a failover under way), -EACCES the master
 * refused the password, -EINTR @stop said so. @stop may be NULL.
 */
int rl_sentinel_open(const struct rl_redis_url *u, __u64 timeout_ns,
		     const struct rl_redis_stop *stop, struct rl_sentinel **out, char *err,
		     size_t errlen);
void rl_sentinel_close(struct rl_sentinel *s);
void rl_sentinel_set_timeout(struct rl_sentinel *s, __u64 timeout_ns);
/* Bytes sent and received over every connection (sentinels, master) since the open. */
void rl_sentinel_bytes(const struct rl_sentinel *s, __u64 *tx, __u64 *rx);
/* rl_redis_sync() on the master, following a switch first (see above). */
int rl_sentinel_sync(struct rl_sentinel *s, const struct rl_sync_req *req,
		     struct rl_sync_item *items, size_t n, struct rl_sync_reply *rep, char *err,
		     size_t errlen);
/* "HOST:PORT" of the master the store writes to. */
void rl_sentinel_master(const struct rl_sentinel *s, char *buf, size_t len);
/* Has the store a subscription to +switch-master now? (tests) */
bool rl_sentinel_subscribed(const struct rl_sentinel *s);

/*
 * The replies, apart (unit tests). A SENTINEL get-master-addr-by-name reply:
 * 0 and @a; -ENOENT for nil (no master of that name); -EPROTO otherwise,
 * with @why.
 */
struct redisReply;
int rl_sentinel_parse_addr(const struct redisReply *rep, struct rl_redis_addr *a, char *why,
			   size_t len);
/* The role a ROLE reply names ("master", "slave", "sentinel"), or NULL if it is no ROLE reply. */
const char *rl_sentinel_parse_role(const struct redisReply *rep);
/*
 * A +switch-master message's payload, "NAME OLDIP OLDPORT NEWIP NEWPORT":
 * true and the new address in @to if it is about @master and well formed.
 */
bool rl_sentinel_parse_switch(const char *payload, const char *master, struct rl_redis_addr *to);

#endif /* RL_SYNC_SENTINEL_H */
