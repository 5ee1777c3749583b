/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fleet sync agent (issue #14; docs/design.md, "Fleet-wide limits"): every
 * interval, drain what this node passed per source, swap it in one round trip
 * for what the other nodes of the group passed, and charge that to the
 * sources here. When Redis fails, a fallback charges instead (local: nothing;
 * share: each source its own units times the other nodes).
 *
 * The step (rl_sync_agent_step) works on sources as text and knows nothing of
 * the kernel, so the tests and the bench drive it with synthetic sources
 * against a real redis-server; rl_sync_run() puts it between the kernel's
 * drain and charge (user/lib/sync_kern.h).
 */
#ifndef RL_SYNC_AGENT_H
#define RL_SYNC_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sync_defs.h"
#include "sync_kern.h"
#include "sync_redis.h"
#include "sync_store.h"

enum rl_sync_fallback {
	RL_SYNC_FB_LOCAL = 0, /* the full limit on each host */
	RL_SYNC_FB_SHARE = 1, /* the limit divided by the nodes last seen */
};

/* How long the first connection may take: an unreachable host fails in this time. */
#define RL_SYNC_CONNECT_TIMEOUT_NS 1000000000ULL
/* Key expiry: 10 intervals, at least 2 s, so a node missing a few round trips keeps its keys. */
#define RL_SYNC_TTL_MIN_MS 2000ULL
/* A node that had not synced a source for 3 intervals, and at least this, is stale on it. */
#define RL_SYNC_STALE_MIN_MS 1000ULL
/* Sources remembered at most (see struct rl_sync_recent): the default table size. */
#define RL_SYNC_RECENT_MAX (1U << 20)
/* Where the agents' locks live: one file per network namespace and interface. */
#define RL_SYNC_LOCK_DIR "/run/xdp-ratelimit"

struct rl_sync_cfg {
	struct rl_redis_url url;
	const char *group, *node;
	__u64 interval_ns;
	enum rl_sync_fallback fallback;
	/* Asked while waiting for Redis (connect, round trip): true stops the wait. */
	struct rl_redis_stop stop;
};

struct rl_sync_agent {
	struct rl_sync_cfg cfg;
	struct rl_sync_store *r; /* NULL while Redis is failing */
	struct rl_sync_status st;
	const char *policy; /* this node's policy text (the caller's buffer) */
	__u64 ttl_ms, stale_ms;
	/* While down: steps failed in a row, and steps to skip before the next try. */
	unsigned int failed, skip;
	bool mismatch; /* another live node's policy differs: in fallback until it agrees */
	__u64 refused_warned_ns; /* when a refused charge was last said (one line per 10 s) */
	__u64 commands_total; /* Redis commands sent (bench) */
	__u64 tx_closed, rx_closed; /* bytes of connections closed since */
	char url_str[300];
};

/* Group and node names: 1-63 of [A-Za-z0-9._-] (they go into key names and hash tags). */
int rl_sync_name_check(const char *what, const char *name, char *err, size_t errlen);

/*
 * Connect and make a first round trip with no sources: it fails (-errno and a
 * message) when Redis cannot be reached or refuses our password (-EINTR: the
 * stop check said so). When another live node of the group has another
 * policy it returns 1 with the message naming the line: the agent runs, in
 * fallback (state RL_SYNC_POLICY_MISMATCH), until the policies agree.
 */
int rl_sync_agent_init(struct rl_sync_agent *ag, const struct rl_sync_cfg *cfg, const char *policy,
		       char *err, size_t errlen);
/* The same in two steps: connect (an unreachable server, a wrong password), then the round trip. */
int rl_sync_agent_connect(struct rl_sync_agent *ag, const struct rl_sync_cfg *cfg, char *err,
			  size_t errlen);
int rl_sync_agent_start(struct rl_sync_agent *ag, const char *policy, char *err, size_t errlen);
/*
 * Instead of rl_sync_agent_start() when rl_sync_agent_connect() could not
 * reach the server: in fallback from the start, each step trying to connect
 * (as after a failed round trip). Returns 1.
 */
int rl_sync_agent_down(struct rl_sync_agent *ag, const char *policy);
void rl_sync_agent_fini(struct rl_sync_agent *ag);

/*
 * One interval: @items are the sources this node passed (units); on return
 * each one's remote is what to charge it (what the others passed, or the
 * fallback's charge). Returns 0 synced, 1 in fallback (the failure said once
 * on stderr; also while another live node's policy differs), -EINTR when the
 * stop check ended a wait for Redis. A remote charge larger than the fleet
 * can have passed (rl_sync_charge_max()) is refused: that item gets 0, and
 * ag->st.charges_refused_total counts it. Updates ag->st (state, counters, lag).
 */
int rl_sync_agent_step(struct rl_sync_agent *ag, struct rl_sync_item *items, size_t n, char *err,
		       size_t errlen);

/*
 * The most remote units one source can legitimately be charged in one round
 * trip, from @policy's text (rl_sync_kern_policy()), the live nodes (this one
 * included) and the stale time, the largest over the default rule and every
 * limit rule the text names (a source is the default rule's or one rule's,
 * and one bound is kept for all): the other nodes' units for a source span at
 * most this node's gap between two asks (at most @stale_ms, or it gets none)
 * and one round of theirs (at most @stale_ms too, or they had gone stale), so
 * with W = 2 x @stale_ms and F one full frame in byte mode (else 0):
 *	token-bucket, gcra:	  (nodes - 1) x (burst + rate x W + F)
 *	fixed-, sliding-window:	  (nodes - 1) x (limit + F) x (W / window + 2)
 * (limit = rate x window). ~0 (no bound) when the text does not parse.
 */
__u64 rl_sync_charge_max(const char *policy, __u64 nodes, __u64 stale_ms);

/*
 * The sources this node synced lately. The kernel drains only the sources
 * that passed something; one whose state is in debt here passes nothing, yet
 * must go on being charged what the others pass, or it would drop out of the
 * exchange (3 intervals: stale), forget the others' units and pass again too
 * soon. So every source drained within the last @keep intervals is sent each
 * interval, with 0 units when nothing passed. At most @max sources are
 * remembered (those drained now always go).
 */
struct rl_sync_recent {
	struct rl_sync_rent *tab; /* open addressing, cap a power of 2 */
	size_t cap, n, max;
	__u64 tick;
	unsigned int keep;
	/* The last merge, in one order: the exchange's items and their keys. */
	struct rl_sync_item *items;
	struct rl_state_key *keys;
	size_t nitems;
};

/* @name: the text of a source (rl_sync_src_format). 0 or -errno. */
typedef int (*rl_sync_name_fn)(void *ctx, const struct rl_state_key *key, char *buf, size_t len);

void rl_sync_recent_init(struct rl_sync_recent *r, unsigned int keep, size_t max);
/* One interval: the drained sources and the remembered ones, into r->items and r->keys. */
int rl_sync_recent_merge(struct rl_sync_recent *r, const struct rl_sync_src *drained, size_t n,
			 rl_sync_name_fn name, void *ctx);
/* Forget every source (after a set: new keys, and the old ones' text is the same). */
void rl_sync_recent_clear(struct rl_sync_recent *r);
void rl_sync_recent_free(struct rl_sync_recent *r);

/*
 * The lock against two agents on one interface of one network namespace: an
 * fd for rl_sync_unlock(), or -EBUSY with a message naming the other agent's
 * pid. A killed agent's lock goes with its process (flock); its file stays
 * until the next agent's clean exit.
 */
int rl_sync_lock(const char *ifname, char *err, size_t errlen);
/* Release it and remove its file (rl_lock_file_release()), in the namespace that took it. */
void rl_sync_unlock(const char *ifname, int fd);

/*
 * The agent on interface @ifname until *@stop or a SIGINT/SIGTERM: 0 on a
 * clean stop, -errno with @err otherwise. @signals: block and wait for
 * SIGINT and SIGTERM (the command); without it only *@stop ends it.
 */
int rl_sync_run(const char *ifname, const struct rl_sync_cfg *cfg, bool signals,
		volatile sig_atomic_t *stop, char *err, size_t errlen);

/*
 * One interval of rl_sync_run(): drain @k, the round trip of @ag (started,
 * rl_sync_recent_init()'ed @rc), charge, status. For the tests, which run it
 * on limiters under BPF_PROG_TEST_RUN. As rl_sync_run()'s rounds: 0, or
 * -errno with @err (-EINTR: the stop check).
 */
int rl_sync_round(struct rl_sync_kern *k, struct rl_sync_agent *ag, struct rl_sync_recent *rc,
		  char *err, size_t errlen);

#endif /* RL_SYNC_AGENT_H */
