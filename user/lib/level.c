// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The levels above the source from userspace: see level.h and include/rl_agg.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "json_writer.h"
#include "level.h"
#include "source.h"

typedef unsigned __int128 u128;

static const char *const level_names[RL_LVL__COUNT] = {
	[RL_LVL_SOURCE] = "source", [RL_LVL_PREFIX] = "aggregate", [RL_LVL_IFACE] = "iface",
	[RL_LVL_NEW] = "new",	    [RL_LVL_ADMIT] = "admit",
};

const char *rl_level_name(unsigned int id)
{
	return id < RL_LVL__COUNT ? level_names[id] : "unknown";
}

/* The options of each level, for messages: rate, burst. */
static const char *const rate_opt[RL_LVL__COUNT] = {
	[RL_LVL_PREFIX] = "aggregate-rate",
	[RL_LVL_IFACE] = "iface-rate",
	[RL_LVL_ADMIT] = "admit-rate",
};
static const char *const burst_opt[RL_LVL__COUNT] = {
	[RL_LVL_PREFIX] = "aggregate-burst",
	[RL_LVL_IFACE] = "iface-burst",
	[RL_LVL_ADMIT] = "admit-burst",
};

static bool is_bucket(__u32 algo)
{
	return algo == RL_ALGO_TOKEN_BUCKET || algo == RL_ALGO_GCRA;
}

static void prefix_mask(__u32 *mask, unsigned int words, unsigned int bits)
{
	for (unsigned int i = 0; i < words; i++) {
		unsigned int keep = bits > 32 ? 32 : bits;

		mask[i] = keep ? htonl(~0U << (32 - keep)) : 0;
		bits -= keep;
	}
}

static const struct rl_level_policy *level_pol(const struct rl_policy *pol, unsigned int id)
{
	return id == RL_LVL_PREFIX ? &pol->agg : id == RL_LVL_IFACE ? &pol->iface : &pol->admit;
}

/*
 * The parameters of level @id from its options: the policy's algorithm and
 * window with the level's rate and burst (the admission cap: a token bucket
 * of new sources), checked as a policy is, a message about the policy's
 * option named as the level's.
 */
static int level_params(struct rl_level *l, unsigned int id, const struct rl_policy *pol,
			const char **about, char *err, size_t errlen)
{
	const struct rl_level_policy *lp = level_pol(pol, id);
	struct rl_policy q = *pol;
	int ret;

	if (id == RL_LVL_ADMIT) {
		if (lp->bytes) {
			*about = rate_opt[id];
			snprintf(
				err, errlen,
				" counts new sources per second (100, 10/s, 600/min): give no byte "
				"unit");
			return -EINVAL;
		}
		q.algo = RL_ALGO_TOKEN_BUCKET;
		q.window_set = false;
	} else if (!is_bucket(pol->algo) && lp->burst_set) {
		*about = burst_opt[id];
		snprintf(err, errlen,
			 " has no meaning for %s (the level's limit per window is --%s x --window)",
			 rl_algo_name(pol->algo), rate_opt[id]);
		return -EINVAL;
	}
	q.rate_num = lp->rate_num;
	q.rate_den = lp->rate_den;
	q.bytes = lp->bytes;
	q.rate_set = true;
	q.burst = lp->burst;
	q.burst_set = lp->burst_set;
	q.initial_set = false;
	ret = rl_params_init_about(&l->params, &q, about, err, errlen);
	if (!ret)
		ret = rl_policy_check_about(&q, about, err, errlen);
	if (ret && *about) {
		if (!strcmp(*about, "rate"))
			*about = rate_opt[id];
		else if (!strcmp(*about, "burst"))
			*about = burst_opt[id];
	}
	if (ret)
		return ret;
	l->rate_num = lp->rate_num;
	l->rate_den = lp->rate_den;
	if (is_bucket(l->params.algo))
		l->burst = l->params.tau / l->params.unit_cost;
	return 0;
}

/* The prefix level's prefixes: each within its family's range and no longer than a source's. */
static int prefix_check(const struct rl_policy *pol, const char **about, char *err, size_t errlen)
{
	if (pol->agg_prefix4 > (int)pol->prefix4) {
		*about = "aggregate4";
		snprintf(err, errlen,
			 " %d is longer than --prefix4 (%u): an aggregate holds whole sources",
			 pol->agg_prefix4, pol->prefix4);
		return -EINVAL;
	}
	if (pol->agg_prefix6 > (int)pol->prefix6) {
		*about = "aggregate6";
		snprintf(err, errlen,
			 " %d is longer than --prefix6 (%u): an aggregate holds whole sources",
			 pol->agg_prefix6, pol->prefix6);
		return -EINVAL;
	}
	return 0;
}

int rl_levels_build_about(struct rl_level *lvl, const struct rl_policy *pol,
			  const struct rl_params *src, const char **about, char *err, size_t errlen)
{
	bool p4 = pol->agg_prefix4 >= 0, p6 = pol->agg_prefix6 >= 0;
	int ret;

	*about = NULL;
	memset(lvl, 0, sizeof(*lvl) * RL_LVL_N);
	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_ADMIT; id++) {
		const struct rl_level_policy *lp;
		struct rl_level *l = &lvl[id - 1];

		if (id == RL_LVL_NEW)
			continue;
		lp = level_pol(pol, id);
		if (!lp->rate_num) {
			if (lp->burst_set) {
				*about = burst_opt[id];
				snprintf(err, errlen, " needs --%s", rate_opt[id]);
				return -EINVAL;
			}
			if (id == RL_LVL_PREFIX && (p4 || p6)) {
				*about = p4 ? "aggregate4" : "aggregate6";
				snprintf(err, errlen,
					 " needs --aggregate-rate: the limit of each aggregate");
				return -EINVAL;
			}
			continue;
		}
		if (id == RL_LVL_PREFIX) {
			if (!p4 && !p6) {
				*about = "aggregate-rate";
				snprintf(err, errlen,
					 " needs --aggregate4 N or --aggregate6 N: the prefix that "
					 "makes sources one aggregate");
				return -EINVAL;
			}
			ret = prefix_check(pol, about, err, errlen);
			if (ret)
				return ret;
			l->on = (p4 ? RL_LVL_ON4 : 0) | (p6 ? RL_LVL_ON6 : 0);
			l->prefix4 = p4 ? (__u32)pol->agg_prefix4 : 0;
			l->prefix6 = p6 ? (__u32)pol->agg_prefix6 : 0;
			prefix_mask(&l->mask4, 1, l->prefix4);
			prefix_mask(l->mask6, 4, l->prefix6);
		} else {
			l->on = RL_LVL_ON4 | RL_LVL_ON6;
		}
		ret = level_params(l, id, pol, about, err, errlen);
		if (ret)
			return ret;
	}
	/* Beyond the cap, new sources are limited as one source of the policy. */
	if (lvl[RL_LVL_ADMIT - 1].on) {
		struct rl_level *n = &lvl[RL_LVL_NEW - 1];

		n->on = RL_LVL_ON4 | RL_LVL_ON6;
		n->params = *src;
		n->rate_num = pol->rate_num;
		n->rate_den = pol->rate_den;
		if (is_bucket(src->algo) && src->unit_cost)
			n->burst = src->tau / src->unit_cost;
	}
	return 0;
}

/* carry_mult / 2^carry_shift = unit_cost_new / unit_cost_prev, as precise as fits. */
static void carry_ratio(__u64 cn, __u64 co, __u64 *mult, __u32 *shift)
{
	*mult = 0;
	*shift = 0;
	if (!co)
		return;
	for (int s = 63; s >= 0; s--) {
		u128 m = ((u128)cn << s) / co;

		if (m <= ~0ULL) {
			*mult = (__u64)m;
			*shift = (__u32)s;
			return;
		}
	}
	/* unit_cost <= 2^62, so cn / co < 2^63 and s = 0 always fits. */
}

void rl_carry_setup(const struct rl_params *cur, const struct rl_params *prev, __u32 *carry,
		    __u64 *mult, __u32 *shift)
{
	*mult = 0;
	*shift = 0;
	if (cur->algo == RL_ALGO_TOKEN_BUCKET && prev->algo == RL_ALGO_TOKEN_BUCKET) {
		*carry = RL_CARRY_TOKENS;
		carry_ratio(cur->unit_cost, prev->unit_cost, mult, shift);
	} else if (is_bucket(cur->algo) && is_bucket(prev->algo)) {
		*carry = RL_CARRY_BUCKET;
		carry_ratio(cur->unit_cost, prev->unit_cost, mult, shift);
	} else if (cur->algo == prev->algo && cur->window_ns == prev->window_ns) {
		*carry = RL_CARRY_WINDOW;
	} else {
		*carry = RL_CARRY_NONE;
	}
}

void rl_levels_carry(struct rl_config *cfg, const struct rl_config *prev)
{
	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_ADMIT; id++) {
		struct rl_level *l = RL_LVL(cfg, id);
		const struct rl_level *p = prev ? RL_LVL(prev, id) : NULL;

		l->has_prev = 0;
		l->carry = RL_CARRY_NONE;
		if (!l->on || !p || !p->on)
			continue;
		l->prev = p->params;
		l->prev_mask4 = p->mask4;
		memcpy(l->prev_mask6, p->mask6, sizeof(l->prev_mask6));
		rl_carry_setup(&l->params, &p->params, &l->carry, &l->carry_mult, &l->carry_shift);
		l->has_prev = l->carry != RL_CARRY_NONE;
	}
}

bool rl_levels_same(const struct rl_config *a, const struct rl_config *b)
{
	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_ADMIT; id++) {
		const struct rl_level *x = RL_LVL(a, id), *y = RL_LVL(b, id);

		if (x->on != y->on)
			return false;
		if (!x->on)
			continue;
		if (memcmp(&x->params, &y->params, sizeof(x->params)) || x->mask4 != y->mask4 ||
		    memcmp(x->mask6, y->mask6, sizeof(x->mask6)) || x->prefix4 != y->prefix4 ||
		    x->prefix6 != y->prefix6 || x->rate_num != y->rate_num ||
		    x->rate_den != y->rate_den || x->burst != y->burst)
			return false;
	}
	return true;
}

void rl_levels_policy(const struct rl_config *cfg, struct rl_policy *pol)
{
	const struct rl_level *a = RL_LVL(cfg, RL_LVL_PREFIX);

	pol->agg_prefix4 = a->on & RL_LVL_ON4 ? (int)a->prefix4 : -1;
	pol->agg_prefix6 = a->on & RL_LVL_ON6 ? (int)a->prefix6 : -1;
	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_ADMIT; id++) {
		const struct rl_level *l = RL_LVL(cfg, id);
		struct rl_level_policy *lp;

		if (id == RL_LVL_NEW)
			continue;
		lp = (struct rl_level_policy *)level_pol(pol, id);
		memset(lp, 0, sizeof(*lp));
		lp->rate_den = 1;
		if (!l->on)
			continue;
		lp->rate_num = l->rate_num;
		lp->rate_den = l->rate_den;
		lp->bytes = l->params.bytes;
		lp->rate_set = true;
		if (is_bucket(l->params.algo)) {
			lp->burst = l->burst;
			lp->burst_set = true;
		}
	}
}

static void merge_one(struct rl_level_policy *p, const struct rl_level_policy *g,
		      bool family_changed)
{
	if (family_changed)
		p->burst_set = false;
	if (g->rate_set) {
		/* A burst in packets means nothing for a byte rate, and the reverse. */
		if (g->bytes != p->bytes && !g->burst_set)
			p->burst_set = false;
		p->rate_num = g->rate_num;
		p->rate_den = g->rate_den;
		p->bytes = g->bytes;
		p->rate_set = true;
		if (!g->rate_num)
			p->burst_set = false; /* off: nothing of it stays */
	}
	if (g->burst_set) {
		p->burst = g->burst;
		p->burst_set = true;
	}
}

void rl_levels_merge(struct rl_policy *pol, const struct rl_policy *given, bool family_changed)
{
	if (given->agg_prefix4_set)
		pol->agg_prefix4 = given->agg_prefix4;
	if (given->agg_prefix6_set)
		pol->agg_prefix6 = given->agg_prefix6;
	merge_one(&pol->agg, &given->agg, family_changed);
	merge_one(&pol->iface, &given->iface, family_changed);
	merge_one(&pol->admit, &given->admit, false);
	/* The aggregate turned off: its prefixes go too, unless given again. */
	if (given->agg.rate_set && !given->agg.rate_num) {
		if (!given->agg_prefix4_set)
			pol->agg_prefix4 = -1;
		if (!given->agg_prefix6_set)
			pol->agg_prefix6 = -1;
	}
}

bool rl_levels_any(const struct rl_config *cfg)
{
	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_ADMIT; id++)
		if (RL_LVL(cfg, id)->on)
			return true;
	return false;
}

/* "1000/s, burst 1000" or "1000/s per window" of level @l. */
static void limit_str(const struct rl_level *l, char *buf, size_t len)
{
	struct rl_policy q;
	char rate[64];

	rl_policy_defaults(&q);
	q.rate_num = l->rate_num;
	q.rate_den = l->rate_den;
	q.bytes = l->params.bytes;
	rl_rate_str(&q, rate, sizeof(rate));
	if (is_bucket(l->params.algo))
		snprintf(buf, len, "%s, burst %llu%s", rate, (unsigned long long)l->burst,
			 l->params.bytes ? " bytes" : "");
	else
		snprintf(buf, len, "%s (%llu%s per window)", rate,
			 (unsigned long long)l->params.limit, l->params.bytes ? " bytes" : "");
}

void rl_levels_describe(const struct rl_config *cfg, char *buf, size_t len)
{
	const struct rl_level *a = RL_LVL(cfg, RL_LVL_PREFIX), *i = RL_LVL(cfg, RL_LVL_IFACE);
	const struct rl_level *ad = RL_LVL(cfg, RL_LVL_ADMIT);
	char lim[128], p[64] = "";
	size_t off = 0;

	buf[0] = '\0';
	if (a->on) {
		if (a->on & RL_LVL_ON4)
			snprintf(p, sizeof(p), "/%u (IPv4)", a->prefix4);
		if (a->on & RL_LVL_ON6)
			snprintf(p + strlen(p), sizeof(p) - strlen(p), "%s/%u (IPv6)",
				 a->on & RL_LVL_ON4 ? " " : "", a->prefix6);
		limit_str(a, lim, sizeof(lim));
		off += (size_t)snprintf(buf + off, len - off, "; per aggregate %s: %s", p, lim);
	}
	if (i->on && off < len) {
		limit_str(i, lim, sizeof(lim));
		off += (size_t)snprintf(buf + off, len - off, "; interface: %s", lim);
	}
	if (ad->on && off < len) {
		limit_str(ad, lim, sizeof(lim));
		snprintf(buf + off, len - off,
			 "; new sources: %s (beyond it, limited as one until seen again)", lim);
	}
}

void rl_level_usage(const struct rl_level *l, __u64 state, __u64 now, double *used, double *credit,
		    double *wait_s)
{
	const struct rl_params *p = &l->params;
	__u64 probe = p->bytes ? 64 : 1, next, e, k, pc, cc;
	double est;

	if (is_bucket(p->algo)) {
		double vt_per_ns = (double)p->vt_mult / (double)(1ULL << RL_VT_SHIFT);
		__u64 ahead = rl_ahead(p, state, rl_vt(p, now));
		double need = p->algo == RL_ALGO_GCRA ? 1 : (double)(probe * p->unit_cost);
		double excess = (double)ahead + need - (double)p->tau;

		*used = p->tau ? (double)ahead / (double)p->tau : 1;
		*credit = ((double)p->tau - (double)ahead) / (double)p->unit_cost;
		if (*credit < 0)
			*credit = 0;
		*wait_s = excess > 0 ? excess / vt_per_ns / 1e9 : 0;
		return;
	}
	k = rl_window_ahead(p, state, rl_window(p, now, &e), &e);
	rl_window_counts(p, state, k, &pc, &cc);
	est = (double)pc * (double)(p->window_ns - e) / (double)p->window_ns + (double)cc;
	*used = est / (double)p->limit;
	*credit = est < (double)p->limit ? (double)p->limit - est : 0;
	/* Until a packet would pass: the step, tried forward in 1/64-window steps. */
	*wait_s = 0;
	for (int i = 0; i <= 128 && !rl_step(p, state, now + i * (p->window_ns / 64), probe, &next);
	     i++)
		*wait_s = (double)(i + 1) * (double)(p->window_ns / 64) / 1e9;
}

__u32 rl_admit_bits_for(__u32 max_sources)
{
	__u32 bits = RL_ADMIT_BITS_MIN;

	while (bits < RL_ADMIT_BITS_MAX && (1ULL << bits) < max_sources)
		bits++;
	return bits;
}

void rl_level_key(const struct rl_level *l, unsigned int id, const struct rl_key *src,
		  struct rl_key *out)
{
	memset(out, 0, sizeof(*out));
	if (id != RL_LVL_PREFIX)
		return;
	if (rl_key_is_anon(src)) {
		*out = *src;
	} else if (rl_key_is_v4(src)) {
		out->addr[2] = htonl(0xffff);
		out->addr[3] = src->addr[3] & l->mask4;
	} else {
		for (int i = 0; i < 4; i++)
			out->addr[i] = src->addr[i] & l->mask6[i];
	}
}

void rl_level_sim_init(struct rl_level_sim *ls, const struct rl_level *lvl)
{
	memset(ls, 0, sizeof(*ls));
	ls->lvl = lvl;
	rl_srctab_init(&ls->agg);
	rl_srctab_init(&ls->seen);
}

void rl_level_sim_free(struct rl_level_sim *ls)
{
	rl_srctab_free(&ls->agg);
	rl_srctab_free(&ls->seen);
}

/* The state of a level of the whole interface, made on first use. */
static __u64 *one_state(struct rl_level_sim *ls, unsigned int id, __u64 now)
{
	if (!ls->made[id]) {
		ls->one[id] = rl_initial_state(&ls->lvl[id - 1].params, now);
		ls->made[id] = true;
		ls->agg_new++;
	}
	return &ls->one[id];
}

int rl_level_sim_check(struct rl_level_sim *ls, const struct rl_key *src, __u64 now, __u32 len,
		       struct rl_level_held *h)
{
	__u32 fam = rl_key_is_v4(src) ? RL_LVL_ON4 : RL_LVL_ON6;

	memset(h, 0, sizeof(*h));
	for (unsigned int i = 0; i < 2; i++) {
		unsigned int id = RL_LVL_PREFIX + i;
		const struct rl_level *l = &ls->lvl[id - 1];
		struct rl_key k;
		int created;

		if (!(l->on & fam))
			continue;
		if (id == RL_LVL_PREFIX) {
			rl_level_key(l, id, src, &k);
			h->agg = rl_srctab_get(&ls->agg, &k, &created);
			if (!h->agg)
				return -ENOMEM;
			if (created) {
				h->agg->state = rl_initial_state(&l->params, now);
				ls->agg_new++;
			}
			h->st[i] = &h->agg->state;
		} else {
			h->st[i] = one_state(ls, id, now);
		}
		if (!rl_level_check(l, *h->st[i], now, rl_tick(&l->params, now),
				    rl_level_cost(l, len))) {
			ls->limited[id]++;
			if (id == RL_LVL_PREFIX)
				h->agg->dropped++;
			return (int)id;
		}
	}
	return 0;
}

void rl_level_sim_charge(struct rl_level_sim *ls, const struct rl_level_held *h, __u64 now,
			 __u32 len)
{
	for (unsigned int i = 0; i < 2; i++) {
		const struct rl_level *l = &ls->lvl[RL_LVL_PREFIX + i - 1];

		if (!h->st[i])
			continue;
		rl_level_charge(l, *h->st[i], now, rl_tick(&l->params, now), rl_level_cost(l, len),
				h->st[i]);
	}
	if (h->agg)
		h->agg->passed++;
}

int rl_level_sim_admit(struct rl_level_sim *ls, const struct rl_key *key, __u64 now, __u32 len)
{
	const struct rl_level *cap = &ls->lvl[RL_LVL_ADMIT - 1], *nl = &ls->lvl[RL_LVL_NEW - 1];
	/* The program's hash and words, keyed with 0: without its table, no collision. */
	__u32 h = rl_admit_hash(key->addr, rl_key_is_v4(key), 0);
	__u64 w;
	struct rl_src *seen;
	__u64 *st, next;
	int created;

	seen = rl_srctab_get(&ls->seen, key, &created);
	if (!seen)
		return -ENOMEM;
	w = seen->state;
	if (!created && rl_admit_seen(w, h, now)) {
		ls->admitted_seen++;
		return 2;
	}
	st = one_state(ls, RL_LVL_ADMIT, now);
	if (rl_step(&cap->params, *st, now, 1, &next)) {
		*st = next;
		return 2;
	}
	seen->state = rl_admit_word(h, now);
	ls->unadmitted++;
	st = one_state(ls, RL_LVL_NEW, now);
	if (rl_step(&nl->params, *st, now, rl_level_cost(nl, len), &next)) {
		*st = next;
		return 1;
	}
	ls->limited[RL_LVL_NEW]++;
	return 0;
}

void rl_level_json(struct rl_json *w, const struct rl_level *l, unsigned int id)
{
	struct rl_policy q;
	char rate[64];

	if (!l->on)
		return;
	rl_policy_defaults(&q);
	q.rate_num = l->rate_num;
	q.rate_den = l->rate_den;
	q.bytes = l->params.bytes;
	jw_name(w, rl_level_name(id));
	jw_start_object(w);
	if (id == RL_LVL_PREFIX && (l->on & RL_LVL_ON4))
		jw_uint_field(w, "prefix4", l->prefix4);
	if (id == RL_LVL_PREFIX && (l->on & RL_LVL_ON6))
		jw_uint_field(w, "prefix6", l->prefix6);
	jw_string_field(w, "rate", rl_rate_str(&q, rate, sizeof(rate)));
	jw_bool_field(w, "bytes", l->params.bytes);
	if (l->params.algo == RL_ALGO_TOKEN_BUCKET || l->params.algo == RL_ALGO_GCRA)
		jw_uint_field(w, "burst", l->burst);
	else
		jw_uint_field(w, "limit", l->params.limit);
	jw_end_object(w);
}
