// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the sync agent sends each interval: see sync_recent.h. Every source
 * drained is looked up every interval (100,000 and more), so the table is
 * built for that: the entries dense and small (64 bytes, their text apart),
 * the index a flat array of 8-byte slots holding a fingerprint of the key, so
 * a lookup reads one slot and, on a match, one entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sync_recent.h"

struct rl_sync_rent {
	struct rl_state_key k;
	__u32 hash; /* rl_sync_src_hash(text): its bucket, and its claim's spread */
	__u64 seen; /* the tick it last passed something (or was learned shared) */
	__u64 units; /* units passed in tick @seen */
	__u64 held; /* claimed: units of its last tick, not sent */
	__u64 due; /* claimed: the tick its claim is sent again */
	__u32 state; /* enum rl_sync_src_state */
	__u32 kh; /* the key's hash (the index's fingerprint) */
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
	free(r->ents);
	free(r->text);
	free(r->idx);
	r->ents = NULL;
	r->text = NULL;
	r->idx = NULL;
	r->n = r->cap = r->live = r->icap = 0;
	memset(r->bucket_id, 0, sizeof(r->bucket_id));
	memset(r->bucket_ok, 0, sizeof(r->bucket_ok));
}

void rl_sync_recent_free(struct rl_sync_recent *r)
{
	rl_sync_recent_clear(r);
	free(r->items);
	free(r->ents_of);
	free(r->chg);
	r->items = NULL;
	r->ents_of = NULL;
	r->chg = NULL;
	r->nitems = r->items_cap = r->nchg = r->chg_cap = 0;
}

/* FNV-1a over the key, then a mix so that the low bits (the index's) depend on all of it. */
static __u32 key_hash(const struct rl_state_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	__u64 h = 1469598103934665603ULL;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (__u32)h;
}

/* The index slot of @k (hash @h): its entry's, or the empty one where it goes. */
static size_t slot_of(const struct rl_sync_recent *r, const struct rl_state_key *k, __u32 h)
{
	for (size_t i = h & (r->icap - 1);; i = (i + 1) & (r->icap - 1)) {
		__u64 s = r->idx[i];

		if (!s)
			return i;
		if ((__u32)(s >> 32) == h && !memcmp(&r->ents[(__u32)s - 1].k, k, sizeof(*k)))
			return i;
	}
}

static bool expired(const struct rl_sync_recent *r, const struct rl_sync_rent *e)
{
	return r->tick - e->seen > (e->state == RL_SRC_SHARED ? r->cfg.keep : r->cfg.keep_claimed);
}

/* The index for the entries there are, with room for @more at a load of 1/2 at most. */
static int reindex(struct rl_sync_recent *r, size_t more)
{
	size_t icap = 64;
	__u64 *idx;

	while (icap < 2 * (r->n + more))
		icap *= 2;
	idx = calloc(icap, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	free(r->idx);
	r->idx = idx;
	r->icap = icap;
	for (size_t i = 0; i < r->n; i++)
		r->idx[slot_of(r, &r->ents[i].k, r->ents[i].kh)] =
			(__u64)r->ents[i].kh << 32 | (__u64)(i + 1);
	return 0;
}

/* Room for @more entries, in the arrays and in the index. */
static int room(struct rl_sync_recent *r, size_t more)
{
	if (r->n + more > r->cap) {
		size_t cap = r->cap ? r->cap : 1024;
		struct rl_sync_rent *ents;
		char(*text)[RL_SYNC_SRC_MAX];

		while (cap < r->n + more)
			cap *= 2;
		ents = realloc(r->ents, cap * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		r->ents = ents;
		text = realloc(r->text, cap * sizeof(*text));
		if (!text)
			return -ENOMEM;
		r->text = text;
		r->cap = cap;
	}
	return 2 * (r->n + more) > r->icap ? reindex(r, more) : 0;
}

/*
 * Drop what has expired (and past cfg.max, what is only remembered): the
 * entries move, so only at the start of a round, before the request points
 * at them.
 */
static int compact(struct rl_sync_recent *r)
{
	size_t m = 0;

	for (size_t i = 0; i < r->n; i++) {
		if (expired(r, &r->ents[i]) || m >= r->cfg.max)
			continue;
		if (m != i) {
			r->ents[m] = r->ents[i];
			memcpy(r->text[m], r->text[i], sizeof(r->text[m]));
		}
		m++;
	}
	r->n = m;
	return reindex(r, 0);
}

/* A new entry for @k (its index slot @s), named by @text or by @name. */
static struct rl_sync_rent *add(struct rl_sync_recent *r, size_t s, const struct rl_state_key *k,
				__u32 kh, const char *text, rl_sync_name_fn name, void *ctx,
				int *ret)
{
	struct rl_sync_rent *e = &r->ents[r->n];
	char *t = r->text[r->n];

	*ret = 0;
	if (text) {
		snprintf(t, RL_SYNC_SRC_MAX, "%s", text);
	} else {
		*ret = name(ctx, k, t, RL_SYNC_SRC_MAX);
		if (*ret)
			return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->k = *k;
	e->kh = kh;
	e->hash = rl_sync_src_hash(t);
	e->state = RL_SRC_NEW;
	r->idx[s] = (__u64)kh << 32 | (__u64)(r->n + 1);
	r->n++;
	return e;
}

static int push(struct rl_sync_recent *r, size_t i, __u64 units, bool claimed)
{
	struct rl_sync_item *it;

	if (r->nitems == r->items_cap) {
		size_t cap = r->items_cap ? 2 * r->items_cap : 1024;
		struct rl_sync_item *items = realloc(r->items, cap * sizeof(*items));
		size_t *of;

		if (!items)
			return -ENOMEM;
		r->items = items;
		of = realloc(r->ents_of, cap * sizeof(*of));
		if (!of)
			return -ENOMEM;
		r->ents_of = of;
		r->items_cap = cap;
	}
	it = &r->items[r->nitems];
	memcpy(it->src, r->text[i], sizeof(it->src));
	it->units = units;
	it->remote = 0;
	it->local = claimed;
	it->shared = r->ents[i].state == RL_SRC_SHARED;
	it->failed = false;
	r->ents_of[r->nitems++] = i;
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
	/* Compacted when over half of it has expired. */
	if (r->n > 2 * r->live + 1024) {
		ret = compact(r);
		if (ret)
			return ret;
	}
	ret = room(r, n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		__u32 kh = key_hash(&drained[i].k);
		size_t s = slot_of(r, &drained[i].k, kh);
		struct rl_sync_rent *e;

		if (!r->idx[s]) {
			e = add(r, s, &drained[i].k, kh, NULL, name, ctx, &ret);
			if (!e)
				return ret;
		} else {
			e = &r->ents[(__u32)r->idx[s] - 1];
			/* Idle past what the store keeps of it: as new (its claim may be gone). */
			if (e->seen != r->tick && expired(r, e)) {
				e->state = RL_SRC_NEW;
				e->held = 0;
			}
		}
		if (e->seen != r->tick) {
			e->seen = r->tick;
			e->units = 0;
		}
		e->units += drained[i].units;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct rl_sync_rent *e = &r->ents[i];
		__u64 cur;

		if (expired(r, e))
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
		struct rl_sync_rent *e = &r->ents[r->ents_of[i]];

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
		size_t s;
		__u32 kh;

		if (parse(ctx, l->inbox[i].src, &k)) {
			r->unknown_inbox++;
			continue;
		}
		kh = key_hash(&k);
		s = slot_of(r, &k, kh);
		if (!r->idx[s]) {
			e = add(r, s, &k, kh, l->inbox[i].src, NULL, NULL, &ret);
		} else {
			e = &r->ents[(__u32)r->idx[s] - 1];
			if (expired(r, e))
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
		for (size_t i = 0; i < r->n; i++) {
			struct rl_sync_rent *e = &r->ents[i];

			if (e->state == RL_SRC_CLAIMED && lost & (1ULL << (e->hash % r->nbuckets)))
				e->state = RL_SRC_NEW;
		}
	return 0;
}

int rl_sync_recent_state(const struct rl_sync_recent *r, const struct rl_state_key *key)
{
	const struct rl_sync_rent *e;
	size_t s;

	if (!r->icap)
		return -1;
	s = slot_of(r, key, key_hash(key));
	if (!r->idx[s])
		return -1;
	e = &r->ents[(__u32)r->idx[s] - 1];
	return expired(r, e) ? -1 : (int)e->state;
}
