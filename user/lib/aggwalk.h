/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The states of the levels above the source (include/rl_agg.h) in a
 * limiter's rl_agg, from userspace: each live one with its level, its rule
 * and how far it stands. What top and the exporter list.
 */
#ifndef RL_AGGWALK_H
#define RL_AGGWALK_H

#include <linux/types.h>
#include "maplist.h"
#include "rl_common.h"
#include "rl_rules.h"

/* One level state, as rl_levels_walk() hands it on. */
struct rl_level_row {
	struct rl_agg_key key;
	unsigned int id; /* enum rl_level_id */
	const struct rl_krule *rule; /* the limit rule it belongs to; NULL: the default policy */
	const struct rl_level *level; /* its parameters */
	double used, credit, wait_s; /* rl_level_usage() */
};

/*
 * Every state of rl_agg that the live configuration @cfg (and the rules
 * @rules, or NULL) reads now, to @fn, the states a set has not carried yet
 * left out. A non-zero return from @fn stops the walk and is returned.
 * The clock is read after each state (as rl_state_walk()).
 */
typedef int (*rl_level_fn)(const struct rl_level_row *row, void *ctx);
int rl_levels_walk(const struct rl_pins *pins, const struct rl_config *cfg,
		   const struct rl_rules_cfg *rules, rl_level_fn fn, void *ctx);

/* "198.18.1.0/24", "2001:db8::/48", "(interface)", "(new sources)" into @buf. */
char *rl_level_row_str(const struct rl_level_row *row, char *buf, size_t len);

#endif /* RL_AGGWALK_H */
