// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What-if reports: one pass over a capture, every candidate policy (see whatif.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "whatif.h"

void rl_whatif_init(struct rl_whatif *w)
{
	memset(w, 0, sizeof(*w));
	w->width = RL_WHATIF_BIN0_NS;
	rl_srctab_init(&w->hosts);
}

void rl_whatif_free(struct rl_whatif *w)
{
	for (size_t i = 0; i < w->n; i++) {
		rl_replay_free(&w->c[i].model);
		rl_srctab_free(&w->c[i].hosts);
	}
	free(w->c);
	rl_srctab_free(&w->hosts);
	memset(w, 0, sizeof(*w));
}

int rl_whatif_add(struct rl_whatif *w, const char *name, const struct rl_ruleset *set,
		  bool malformed_drop)
{
	struct rl_whatif_cand *v = realloc(w->c, (w->n + 1) * sizeof(*v)), *c;
	int ret;

	if (!v)
		return -ENOMEM;
	w->c = v;
	c = &w->c[w->n];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	ret = rl_replay_init(&c->model, set, malformed_drop);
	if (ret)
		return ret;
	rl_srctab_init(&c->hosts);
	w->need_l4 |= rl_replay_need_l4(set);
	w->n++;
	return 0;
}

/* Halve the bins' count by doubling their width: bin 2i and 2i+1 become bin i. */
static void merge(__u64 *b)
{
	for (size_t i = 0; i < RL_WHATIF_BINS / 2; i++)
		b[i] = b[2 * i] + b[2 * i + 1];
	memset(b + RL_WHATIF_BINS / 2, 0, RL_WHATIF_BINS / 2 * sizeof(*b));
}

/* The bin of @now, widening the bins until it is one of them. */
static size_t bin_of(struct rl_whatif *w, __u64 now)
{
	__u64 d = now - w->t0;

	while (d / w->width >= RL_WHATIF_BINS) {
		merge(w->rx);
		for (size_t i = 0; i < w->n; i++) {
			merge(w->c[i].drops);
			merge(w->c[i].would);
		}
		w->width *= 2;
		w->nbins = (w->nbins + 1) / 2;
	}
	if (d / w->width + 1 > w->nbins)
		w->nbins = (size_t)(d / w->width) + 1;
	return (size_t)(d / w->width);
}

int rl_whatif_frame(struct rl_whatif *w, const void *data, __u32 caplen, __u32 len, __u64 now,
		    struct rl_frame *fout)
{
	struct rl_frame f;
	struct rl_src *h = NULL;
	size_t b;
	int created;

	if (!w->frames++)
		w->t0 = now;
	rl_frame_parse(&f, data, caplen, len, w->need_l4);
	if (fout)
		*fout = f;
	b = bin_of(w, now);
	w->rx[b]++;
	w->snapped += f.snapped;
	if (f.kind == RL_PARSED_IPV4 || f.kind == RL_PARSED_IPV6) {
		w->ip++;
		h = rl_srctab_get(&w->hosts, &f.pi.src, &created);
		if (!h)
			return -ENOMEM;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct rl_whatif_cand *c = &w->c[i];
		struct rl_src *ch = NULL;

		if (rl_replay_frame(&c->model, &f, now, &c->last))
			return -ENOMEM;
		if (c->last.verdict == XDP_DROP)
			c->drops[b]++;
		if (c->last.r.dry_run)
			c->would[b]++;
		if (!h)
			continue;
		ch = rl_srctab_get(&c->hosts, &f.pi.src, &created);
		if (!ch)
			return -ENOMEM;
		if (c->last.verdict == XDP_DROP)
			ch->dropped++;
		else
			ch->passed++;
	}
	return 0;
}

static int by_dropped(const void *a, const void *b)
{
	const struct rl_src *x = *(const struct rl_src *const *)a;
	const struct rl_src *y = *(const struct rl_src *const *)b;

	if (x->dropped != y->dropped)
		return x->dropped > y->dropped ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

size_t rl_whatif_top(const struct rl_whatif_cand *c, const struct rl_src **out, size_t n)
{
	struct rl_src **v = rl_srctab_sorted(&c->hosts);
	size_t k = 0;

	if (!v)
		return 0;
	qsort(v, c->hosts.count, sizeof(*v), by_dropped);
	for (size_t i = 0; i < c->hosts.count && k < n && v[i]->dropped; i++)
		out[k++] = v[i];
	free(v);
	return k;
}

void rl_whatif_sources_hit(const struct rl_whatif_cand *c, __u64 *some, __u64 *all)
{
	*some = 0;
	*all = 0;
	for (size_t i = 0; i < c->hosts.cap; i++) {
		const struct rl_src *s = &c->hosts.slots[i];

		if (!s->used || !s->dropped)
			continue;
		(*some)++;
		*all += !s->passed;
	}
}
