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
 * drain and charge (user/lib/sync_kern.h), with the table of what to send
 * (user/lib/sync_recent.h) around it.
 */
#ifndef RL_SYNC_AGENT_H
#define RL_SYNC_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sync_defs.h"
#include "sync_kern.h"
#include "sync_recent.h"
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
/*
 * How long a claim (a source only this node has reported) lasts in the
 * store, in TTLs: its agent claims it again between a quarter and a half of
 * it later (1 minute and 15-30 s at the default interval).
 */
#define RL_SYNC_CLAIM_TTLS 30
/*
 * Claims sent per interval at most: a host's first round with 100,000
 * sources is spread over 10 intervals, each bounded in the store's time.
 */
#define RL_SYNC_CLAIMS_MAX 10000
/* Where the agents' locks live: one file per network namespace and interface. */
#define RL_SYNC_LOCK_DIR "/run/xdp-ratelimit"

struct rl_sync_cfg {
	struct rl_redis_url url;
	const char *group, *node;
	__u64 interval_ns;
	/* A round's bound; 0: the interval (at least 5 ms). The bench sets it. */
	__u64 timeout_ns;
	enum rl_sync_fallback fallback;
	/* Asked while waiting for Redis (connect, round trip): true stops the wait. */
	struct rl_redis_stop stop;
};

struct rl_sync_agent {
	struct rl_sync_cfg cfg;
	struct rl_sync_store *r; /* NULL while Redis is failing */
	struct rl_sync_status st;
	const char *policy; /* this node's policy text (the caller's buffer) */
	__u64 ttl_ms, stale_ms, claim_ms;
	/* While down: steps failed in a row, and steps to skip before the next try. */
	unsigned int failed, skip;
	bool mismatch; /* another live node's policy differs: in fallback until it agrees */
	/* The policy text the group's script last accepted: another one is asked alone first. */
	char verified[4096];
	__u64 refused_warned_ns; /* when a refused charge was last said (one line per 10 s) */
	__u64 commands_total; /* Redis commands sent (bench) */
	__u64 exchanges_total; /* exchanges with a server (bench, tests) */
	__u64 moved_total, ask_total, tryagain_total; /* a cluster's redirections followed */
	__u64 remapped_total; /* slots found on another master when the map was read again */
	__u64 redirect_said_ns; /* when redirections were last said (one line per 10 s) */
	bool partial; /* some buckets failed in a row (said once) */
	/* The last round's reply (its inbox), and what the agent learned from it. */
	struct rl_sync_reply rep;
	struct rl_sync_learned learned;
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
 * One interval: @items are the sources this node sends (units); on return
 * each one's remote is what to charge it (what the others passed, or the
 * fallback's charge) and local says the store holds it as this node's alone
 * (struct rl_sync_item). Returns 0 synced, 1 in fallback (the failure said
 * once on stderr; also while another live node's policy differs), -EINTR when
 * the stop check ended a wait for Redis. Buckets that failed while the
 * group's answered fall back for their items alone (said once). A remote
 * charge larger than the fleet can have passed (rl_sync_charge_max()) is
 * refused: that item gets 0, and ag->st.charges_refused_total counts it.
 * Updates ag->st (state, counters, lag) and ag->learned (the inbox, valid
 * until the next step).
 */
int rl_sync_agent_step(struct rl_sync_agent *ag, struct rl_sync_item *items, size_t n, char *err,
		       size_t errlen);

/* The settings of the table of what to send (sync_recent.h) for @ag's interval and TTL. */
void rl_sync_agent_recent_cfg(const struct rl_sync_agent *ag, struct rl_sync_recent_cfg *cfg);
/*
 * One interval without the kernel: @drained into @rc, rc's request through
 * rl_sync_agent_step(), what the round taught back into @rc, and the charges
 * to make in rc->chg (rc->nchg). rl_sync_run() does it between the kernel's
 * drain and charge; the tests and the bench with synthetic sources. The
 * step's result (0, 1, -EINTR), or another -errno with @err.
 */
int rl_sync_agent_round(struct rl_sync_agent *ag, struct rl_sync_recent *rc,
			const struct rl_sync_src *drained, size_t n, rl_sync_name_fn name,
			rl_sync_parse_fn parse, void *ctx, char *err, size_t errlen);

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
int rl_sync_kern_round(struct rl_sync_kern *k, struct rl_sync_agent *ag, struct rl_sync_recent *rc,
		       char *err, size_t errlen);

#endif /* RL_SYNC_AGENT_H */
