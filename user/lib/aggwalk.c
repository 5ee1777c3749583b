// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The levels' states from userspace: see aggwalk.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/bpf.h>
#include "aggwalk.h"
#include "level.h"
#include "source.h"

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The level of key @k under @cfg and @rules, or NULL: another generation, a rule gone. */
static const struct rl_level *key_level(const struct rl_agg_key *k, const struct rl_config *cfg,
					const struct rl_rules_cfg *rules,
					const struct rl_krule **rule)
{
	*rule = NULL;
	if (k->level < RL_LVL_PREFIX || k->level > RL_LVL_ADMIT)
		return NULL;
	if (k->slot == RL_AGG_DEFAULT)
		return k->gen == cfg->gen ? RL_LVL(cfg, k->level) : NULL;
	for (__u32 i = 0; rules && i < rules->n && i < RL_RULE_SLOTS; i++)
		if (rules->r[i].slot == k->slot && rules->r[i].gen == k->gen) {
			*rule = &rules->r[i];
			return RL_LVL(&rules->r[i].cfg, k->level);
		}
	return NULL;
}

int rl_levels_walk(const struct rl_pins *pins, const struct rl_config *cfg,
		   const struct rl_rules_cfg *rules, rl_level_fn fn, void *ctx)
{
	struct rl_agg_key k, next, *keys = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;
	int ret = 0;

	/* The keys first: the LRU reorders itself under a walk that looks values up. */
	while (!bpf_map_get_next_key(pins->agg, prev, &next)) {
		k = next;
		prev = &k;
		if (n == cap) {
			struct rl_agg_key *p =
				realloc(keys, (cap = cap ? 2 * cap : 256) * sizeof(*p));

			if (!p) {
				free(keys);
				return -ENOMEM;
			}
			keys = p;
		}
		keys[n++] = k;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		struct rl_level_row row = { .key = keys[i], .id = keys[i].level };
		__u64 st;

		row.level = key_level(&keys[i], cfg, rules, &row.rule);
		if (!row.level || !row.level->on || bpf_map_lookup_elem(pins->agg, &keys[i], &st))
			continue; /* another generation, or evicted since */
		rl_level_usage(row.level, st, mono_ns(), &row.used, &row.credit, &row.wait_s);
		ret = fn(&row, ctx);
	}
	free(keys);
	return ret;
}

char *rl_level_row_str(const struct rl_level_row *row, char *buf, size_t len)
{
	switch (row->id) {
	case RL_LVL_PREFIX:
		return rl_key_str(&row->key.src, row->level->prefix4, row->level->prefix6, buf,
				  len);
	case RL_LVL_IFACE:
		snprintf(buf, len, row->rule ? "(the rule's packets)" : "(the interface)");
		return buf;
	case RL_LVL_NEW:
		snprintf(buf, len, "(new sources beyond the cap)");
		return buf;
	default:
		snprintf(buf, len, "(admission cap)");
		return buf;
	}
}
