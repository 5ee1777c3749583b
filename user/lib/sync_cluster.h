/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet sync on a Redis Cluster (issue #27): cluster://HOST:PORT[,HOST:PORT...].
 * hiredis 0.14 has no cluster client, so this is the little of one the sync
 * needs: the hash slot of a key (CRC16), the slot map (CLUSTER SLOTS), one
 * connection per master, and the router under rl_sync_round() (sync_redis.h)
 * that sends each bucket's script to the master of its slot and follows MOVED
 * (the map is asked again) and ASK (ASKING before the command asked again).
 *
 * The sources are spread over RL_CLUSTER_BUCKETS buckets, each under a hash
 * tag of its own chosen so that the buckets fall evenly over the 16384 slots:
 * whatever the masters, each serves about its share of the slots' buckets, so
 * Redis load and memory scale with the masters. One source's keys are all in
 * its bucket, so one script (atomic on its master) still sees all of them.
 */
#ifndef RL_SYNC_CLUSTER_H
#define RL_SYNC_CLUSTER_H

#include <stddef.h>
#include <linux/types.h>
#include "sync_redis.h"

#define RL_CLUSTER_SLOTS 16384
/*
 * Buckets of a group on a cluster: enough to spread over 32 masters, few
 * enough that a round's scripts with no source cost little (about 7 us of
 * a master's CPU each, measured).
 */
#define RL_CLUSTER_BUCKETS 32

/* The hash slot of a key (its hash tag's if it has one): CRC16 (XMODEM) mod 16384. */
unsigned int rl_cluster_slot(const char *key, size_t len);
/*
 * The hash tag of bucket @b of @nbuckets of @group: "GROUP:b", or
 * "GROUP:b.N" with the first N whose slot falls in the bucket's even share
 * of the slots, [b x 16384 / nbuckets, (b + 1) x 16384 / nbuckets).
 */
void rl_cluster_bucket_tag(const char *group, unsigned int b, unsigned int nbuckets, char *buf,
			   size_t len);

struct rl_cluster;

/*
 * Ask the servers of @u in turn for the slot map, then connect to every
 * master (AUTH, the scripts), all within @timeout_ns. 0, or -errno with a
 * message naming the servers tried and the cause.
 */
int rl_cluster_open(const struct rl_redis_url *u, __u64 timeout_ns,
		    const struct rl_redis_stop *stop, struct rl_cluster **out, char *err,
		    size_t errlen);
void rl_cluster_close(struct rl_cluster *c);
/* The bound of each round (and of a connection made during one). */
void rl_cluster_set_timeout(struct rl_cluster *c, __u64 timeout_ns);
/* Bytes sent and received over every connection since it was opened. */
void rl_cluster_bytes(const struct rl_cluster *c, __u64 *tx, __u64 *rx);
/*
 * The round trip (rl_sync_round()): 0 when the group's master answered
 * (buckets of a master that failed are marked failed, the first cause in
 * @err); -errno otherwise. A master that failed is dropped, and the slot map
 * is asked again before the next round; so is it after a MOVED.
 */
int rl_cluster_sync(struct rl_cluster *c, const struct rl_sync_req *req, struct rl_sync_item *items,
		    size_t n, struct rl_sync_reply *rep, char *err, size_t errlen);
/* The masters serving slots, "HOST:PORT,HOST:PORT,..." (truncated to @len). */
void rl_cluster_masters(const struct rl_cluster *c, char *buf, size_t len);

/* What it did since it was opened (tests, -v). */
struct rl_cluster_counters {
	__u64 maps; /* slot maps read (CLUSTER SLOTS) */
	__u64 moved, ask, tryagain; /* redirections followed, retries */
	__u64 remapped; /* slots found on another master when the map was read again */
	__u64 connects; /* connections made to masters */
};
void rl_cluster_counters(const struct rl_cluster *c, struct rl_cluster_counters *out);

#endif /* RL_SYNC_CLUSTER_H */
