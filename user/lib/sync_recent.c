// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the sync agent sends each interval: see sync_recent.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sync_recent.h"

struct rl_sync_rent {
	struct rl_state_key k;
	__u32 hash; /* rl_sync_src_hash(src): its bucket, and its claim's spread */
	__u8 state; /* enum rl_sync_src_state */
	__u8 pad[3];
	__u64 seen; /* the tick it last passed something; 0: an empty slot */
	__u64 units; /* units passed in tick @seen */
	__u64 held; /* claimed: units of the last tick, not sent */
	__u64 due; /* claimed: the tick its claim is sent again */
	char src[RL_SYNC_SRC_MAX];
};

void rl_sync_recent_init(struct rl_sync_recent *r, const struct rl_sync_recent_cfg *cfg)
{
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	if (!r->cfg.claims_max)
		r->cfg.claims_max = 1;
}

void rl_sync_recent_clear(struct rl_sync_recent *r)
{
	free(r->tab);
	r->tab = NULL;
	r->cap = r->used = r->live = 0;
	memset(r->bucket_id, 0, sizeof(r->bucket_id));
	memset(r->bucket_ok, 0, sizeof(r->bucket_ok));
}

void rl_sync_recent_free(struct rl_sync_recent *r)
{
	rl_sync_recent_clear(r);
	free(r->items);
	free(r->ents);
	free(r->chg);
	r->items = NULL;
	r->ents = NULL;
	r->chg = NULL;
	r->nitems = r->items_cap = r->nchg = r->chg_cap = 0;
}

static size_t key_hash(const struct rl_state_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	__u64 h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

/* The slot of @k in @tab: its entry, or the empty slot where it goes. */
static size_t find(const struct rl_sync_rent *tab, size_t cap, const struct rl_state_key *k)
{
	for (size_t i = key_hash(k) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!tab[i].seen || !memcmp(&tab[i].k, k, sizeof(*k)))
			return i;
}

static bool expired(const struct rl_sync_recent *r, const struct rl_sync_rent *e)
{
	return r->tick - e->seen > (e->state == RL_SRC_SHARED ? r->cfg.keep : r->cfg.keep_claimed);
}

/* Keep what has not expired (at most cfg.max, those drained now first)? */
static bool keeps(const struct rl_sync_recent *r, const struct rl_sync_rent *e, size_t kept)
{
	return e->seen && !expired(r, e) && (kept < r->cfg.max || e->seen == r->tick);
}

/* A new table with what has not expired and room for @more (load at most 1/2). */
static int rebuild(struct rl_sync_recent *r, size_t more)
{
	size_t cap = 64, keep = 0, used = 0;
	struct rl_sync_rent *tab;

	for (size_t i = 0; i < r->cap; i++)
		keep += keeps(r, &r->tab[i], keep);
	while (cap < 2 * (keep + more))
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < r->cap; i++) {
		const struct rl_sync_rent *e = &r->tab[i];

		if (!keeps(r, e, used))
			continue;
		tab[find(tab, cap, &e->k)] = *e;
		used++;
	}
	free(r->tab);
	r->tab = tab;
	r->cap = cap;
	r->used = used;
	return 0;
}

/* Room for @more entries at a load of at most 1/2. */
static int room(struct rl_sync_recent *r, size_t more)
{
	return (r->used + more) * 2 <= r->cap ? 0 : rebuild(r, more);
}

static int push(struct rl_sync_recent *r, size_t i, __u64 units, bool claimed)
{
	struct rl_sync_item *it;

	if (r->nitems == r->items_cap) {
		size_t cap = r->items_cap ? 2 * r->items_cap : 1024;
		struct rl_sync_item *items = realloc(r->items, cap * sizeof(*items));
		size_t *ents;

		if (!items)
			return -ENOMEM;
		r->items = items;
		ents = realloc(r->ents, cap * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		r->ents = ents;
		r->items_cap = cap;
	}
	it = &r->items[r->nitems];
	memcpy(it->src, r->tab[i].src, sizeof(it->src));
	it->units = units;
	it->remote = 0;
	it->local = claimed;
	it->failed = false;
	r->ents[r->nitems++] = i;
	return 0;
}

int rl_sync_recent_merge(struct rl_sync_recent *r, const struct rl_sync_src *drained, size_t n,
			 rl_sync_name_fn name, void *ctx)
{
	size_t live = 0;
	int ret;

	r->tick++;
	r->nitems = 0;
	r->sent = r->claims = 0;
	/* Rebuilt when it would fill past half, or when over half of it has expired. */
	if (r->used > 2 * r->live + 64)
		ret = rebuild(r, n);
	else
		ret = room(r, n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		struct rl_sync_rent *e = &r->tab[find(r->tab, r->cap, &drained[i].k)];

		if (!e->seen) {
			ret = name(ctx, &drained[i].k, e->src, sizeof(e->src));
			if (ret) {
				memset(e, 0, sizeof(*e));
				return ret;
			}
			e->k = drained[i].k;
			e->hash = rl_sync_src_hash(e->src);
			e->state = RL_SRC_NEW;
			r->used++;
		} else if (e->seen != r->tick && expired(r, e)) {
			/* Idle past what the store keeps of it: as new (its claim may be gone). */
			e->state = RL_SRC_NEW;
			e->held = 0;
		}
		if (e->seen != r->tick) {
			e->seen = r->tick;
			e->units = 0;
		}
		e->units += drained[i].units;
	}
	for (size_t i = 0; i < r->cap; i++) {
		struct rl_sync_rent *e = &r->tab[i];
		__u64 cur;

		if (!e->seen || expired(r, e))
			continue;
		live++;
		cur = e->seen == r->tick ? e->units : 0;
		switch (e->state) {
		case RL_SRC_SHARED:
			ret = push(r, i, cur + e->held, false);
			e->held = 0;
			break;
		case RL_SRC_NEW:
			if (e->seen != r->tick || r->claims >= r->cfg.claims_max)
				break;
			ret = push(r, i, cur, false);
			r->claims++;
			break;
		case RL_SRC_CLAIMED:
			e->held = cur;
			if (e->seen != r->tick || r->tick < e->due ||
			    r->claims >= r->cfg.claims_max)
				break;
			ret = push(r, i, cur, true);
			e->held = 0;
			r->claims++;
			break;
		}
		if (ret)
			return ret;
	}
	r->live = live;
	r->sent = r->nitems;
	return 0;
}

static int charge(struct rl_sync_recent *r, const struct rl_state_key *k, __u64 units)
{
	if (!units)
		return 0;
	if (r->nchg == r->chg_cap) {
		size_t cap = r->chg_cap ? 2 * r->chg_cap : 1024;
		struct rl_sync_src *p = realloc(r->chg, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->chg = p;
		r->chg_cap = cap;
	}
	r->chg[r->nchg].k = *k;
	r->chg[r->nchg++].units = units;
	return 0;
}

/* The buckets whose claims are lost: a new id, or not answered for longer than the inbox keeps. */
static __u64 lost_buckets(struct rl_sync_recent *r, const struct rl_sync_learned *l)
{
	__u64 lost = 0;

	if (l->nbuckets != r->nbuckets) {
		memset(r->bucket_id, 0, sizeof(r->bucket_id));
		memset(r->bucket_ok, 0, sizeof(r->bucket_ok));
		r->nbuckets = l->nbuckets;
	}
	for (unsigned int b = 0; b < l->nbuckets && b < RL_SYNC_BUCKETS_MAX; b++) {
		__u64 id = l->bucket_id[b];

		if (!id)
			continue;
		if ((r->bucket_id[b] && r->bucket_id[b] != id) ||
		    (r->bucket_ok[b] && r->tick - r->bucket_ok[b] > r->cfg.keep))
			lost |= 1ULL << b;
		r->bucket_id[b] = id;
		r->bucket_ok[b] = r->tick;
	}
	return lost;
}

int rl_sync_recent_apply(struct rl_sync_recent *r, const struct rl_sync_learned *l,
			 rl_sync_parse_fn parse, void *ctx)
{
	__u64 lost;
	int ret;

	r->nchg = 0;
	r->shared = r->claimed = r->unknown_inbox = 0;
	for (size_t i = 0; i < r->nitems; i++) {
		const struct rl_sync_item *it = &r->items[i];
		struct rl_sync_rent *e = &r->tab[r->ents[i]];

		/* Failed, or the fallback: nothing learned, only the fallback's charge. */
		if (l->synced && !it->failed) {
			if (it->local) {
				e->state = RL_SRC_CLAIMED;
				e->due = r->tick + r->cfg.claim_min +
					 (r->cfg.claim_span ? e->hash % r->cfg.claim_span : 0);
				r->claimed++;
			} else {
				e->state = RL_SRC_SHARED;
				r->shared++;
			}
		}
		ret = charge(r, &e->k, it->remote);
		if (ret)
			return ret;
	}
	if (!l->synced)
		return 0;
	/* The inbox: claimed sources another node reported; shared from now on. */
	ret = room(r, l->ninbox);
	if (ret)
		return ret;
	for (size_t i = 0; i < l->ninbox; i++) {
		struct rl_state_key k;
		struct rl_sync_rent *e;

		if (parse(ctx, l->inbox[i].src, &k)) {
			r->unknown_inbox++;
			continue;
		}
		e = &r->tab[find(r->tab, r->cap, &k)];
		if (!e->seen) {
			e->k = k;
			memcpy(e->src, l->inbox[i].src, sizeof(e->src));
			e->src[sizeof(e->src) - 1] = '\0';
			e->hash = rl_sync_src_hash(e->src);
			r->used++;
		} else if (expired(r, e)) {
			e->held = 0;
		}
		e->state = RL_SRC_SHARED;
		/* Remembered as if it passed now: it is sent (and charged) for the next intervals. */
		if (e->seen != r->tick) {
			e->seen = r->tick;
			e->units = 0;
		}
		r->shared++;
		ret = charge(r, &k, l->inbox[i].remote);
		if (ret)
			return ret;
	}
	lost = lost_buckets(r, l);
	if (lost)
		for (size_t i = 0; i < r->cap; i++) {
			struct rl_sync_rent *e = &r->tab[i];

			if (e->seen && e->state == RL_SRC_CLAIMED &&
			    lost & (1ULL << (e->hash % r->nbuckets)))
				e->state = RL_SRC_NEW;
		}
	return 0;
}

int rl_sync_recent_state(const struct rl_sync_recent *r, const struct rl_state_key *key)
{
	const struct rl_sync_rent *e;

	if (!r->cap)
		return -1;
	e = &r->tab[find(r->tab, r->cap, key)];
	return e->seen && !expired(r, e) ? e->state : -1;
}
