/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the sync agent sends each interval, and what it learns back (issues
 * #14, #27; docs/design.md "Fleet-wide limits"): the sources it has drained
 * lately, each one new, claimed or shared.
 *
 *	new	drained, not yet sent: sent (a claim) in the next round, at most
 *		claims_max claims a round (the rest wait: the first round of a
 *		busy host is spread over a few intervals)
 *	claimed	the store says only this node has reported it: not sent, its
 *		units go nowhere; its claim is sent again between claim_min and
 *		claim_min + claim_span intervals later (spread by a hash of the
 *		source), or when its bucket's keys were lost
 *	shared	another node has reported it: sent every interval while it
 *		passes here, and for @keep intervals after (with 0 units: a
 *		source in debt here passes nothing, yet must go on being charged
 *		what the others pass, or it would drop out of the exchange,
 *		forget the others' units and pass again too soon)
 *
 * A claimed source becomes shared when a round's reply says so (its claim
 * was due) or when the inbox names it: then its units of the interval just
 * drained, which were not sent, go with the next round, so the other nodes
 * are charged them one interval late and nothing is lost.
 *
 * The table is keyed by the kernel's key and works on the sources' text only
 * through two callbacks, so the tests and the bench drive it with synthetic
 * sources.
 */
#ifndef RL_SYNC_RECENT_H
#define RL_SYNC_RECENT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "sync_kern.h"
#include "sync_redis.h"

enum rl_sync_src_state {
	RL_SRC_NEW = 0,
	RL_SRC_CLAIMED = 1,
	RL_SRC_SHARED = 2,
};

struct rl_sync_recent_cfg {
	unsigned int keep; /* intervals a shared source is sent after it last passed */
	unsigned int keep_claimed; /* intervals a claimed or new one is remembered */
	unsigned int claim_min, claim_span; /* when a claim is sent again (intervals) */
	size_t claims_max; /* claims sent per interval at most */
	size_t max; /* sources remembered at most (those drained now always go) */
};

/* What a round taught the agent (struct rl_sync_agent's, after rl_sync_agent_step()). */
struct rl_sync_learned {
	bool synced; /* the store answered: the items' local and failed flags and the inbox hold */
	const struct rl_sync_item *inbox;
	size_t ninbox;
	unsigned int nbuckets;
	const __u64 *bucket_id; /* [nbuckets], 0: not read this round */
};

struct rl_sync_rent;

struct rl_sync_recent {
	/*
	 * The sources, dense (their text beside them, apart: a round reads it
	 * only for what it sends), and an index into them by key: open
	 * addressing, entries (fingerprint << 32 | position + 1), 0 empty.
	 */
	struct rl_sync_rent *ents;
	char (*text)[RL_SYNC_SRC_MAX];
	size_t n, cap, live;
	__u64 *idx;
	size_t icap;
	__u64 tick;
	struct rl_sync_recent_cfg cfg;
	/* The last round, in one order: the request's items and their entries' positions. */
	struct rl_sync_item *items;
	size_t *ents_of;
	size_t nitems, items_cap;
	/* The charges the last round brought (items' and inbox's remote units), for the kernel. */
	struct rl_sync_src *chg;
	size_t nchg, chg_cap;
	/* Each bucket's id and the tick it last answered (its claims are lost when either tells). */
	__u64 bucket_id[RL_SYNC_BUCKETS_MAX], bucket_ok[RL_SYNC_BUCKETS_MAX];
	unsigned int nbuckets;
	/* Counts of the last round (for -v and the tests). */
	size_t sent, claims, shared, claimed, unknown_inbox;
};

/* @name: the text of a source (rl_sync_src_format); @parse: back (rl_sync_src_parse). 0 or -errno. */
typedef int (*rl_sync_name_fn)(void *ctx, const struct rl_state_key *key, char *buf, size_t len);
typedef int (*rl_sync_parse_fn)(void *ctx, const char *src, struct rl_state_key *key);

void rl_sync_recent_init(struct rl_sync_recent *r, const struct rl_sync_recent_cfg *cfg);
/*
 * One interval: the drained sources into the table, and the request of this
 * round into r->items (r->nitems): every shared source lately active, the new
 * ones and the claims due (at most cfg.claims_max of both). 0 or -errno.
 */
int rl_sync_recent_merge(struct rl_sync_recent *r, const struct rl_sync_src *drained, size_t n,
			 rl_sync_name_fn name, void *ctx);
/*
 * After the round (r->items as rl_sync_agent_step() left them): the states
 * learned, and the charges to make into r->chg (r->nchg). 0 or -errno.
 */
int rl_sync_recent_apply(struct rl_sync_recent *r, const struct rl_sync_learned *l,
			 rl_sync_parse_fn parse, void *ctx);
/* The state of @key's source, or -1 if the table does not hold it (tests). */
int rl_sync_recent_state(const struct rl_sync_recent *r, const struct rl_state_key *key);
/* Forget every source (after a set: new keys, and the old ones' text is the same). */
void rl_sync_recent_clear(struct rl_sync_recent *r);
void rl_sync_recent_free(struct rl_sync_recent *r);

#endif /* RL_SYNC_RECENT_H */
