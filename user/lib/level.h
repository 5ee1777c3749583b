/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The levels above the source (include/rl_agg.h) from userspace: a policy's
 * level options (--aggregate4, --aggregate6, --aggregate-rate,
 * --aggregate-burst, --iface-rate, --iface-burst, --admit-rate,
 * --admit-burst) checked and turned into struct rl_level, carried over a
 * set, compared, restored, merged by set and described.
 */
#ifndef RL_LEVEL_H
#define RL_LEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "policy.h"
#include "rl_common.h"
#include "srctab.h"

/*
 * The levels of @pol into @lvl (RL_LVL_N of them, lvl[id - 1]), for a
 * source level of parameters @src (RL_LVL_NEW runs them: refused new sources
 * are limited as one source): checked, the parameters computed, nothing
 * carried over yet. As rl_params_init_about(): -EINVAL with *@about the
 * option the message is about ("aggregate-burst") and @err what follows
 * it, or *@about NULL and @err the whole message.
 */
int rl_levels_build_about(struct rl_level *lvl, const struct rl_policy *pol,
			  const struct rl_params *src, const char **about, char *err,
			  size_t errlen);

/*
 * After rl_config_build() built @cfg against @prev (the live configuration):
 * how each level's states carry over, as the sources' do (RL_LVL_NEW
 * follows the source level's carry). With @prev NULL, nothing to carry.
 */
void rl_levels_carry(struct rl_config *cfg, const struct rl_config *prev);

/*
 * How a state of parameters @prev carries over to @cur (struct rl_config's
 * carry, carry_mult and carry_shift): what rl_config_build() and
 * rl_levels_carry() use, for the source and for each level.
 */
void rl_carry_setup(const struct rl_params *cur, const struct rl_params *prev, __u32 *carry,
		    __u64 *mult, __u32 *shift);

/* True if @a and @b's levels enforce the same limits (generations and carry aside). */
bool rl_levels_same(const struct rl_config *a, const struct rl_config *b);

/* The level options a configuration was built from, into @pol (rl_config_policy()). */
void rl_levels_policy(const struct rl_config *cfg, struct rl_policy *pol);

/*
 * set: the level options given in @given into @pol (the live policy, from
 * rl_config_policy()): what is given replaces, "off" turns a level off, the
 * rest stays. @family_changed: the algorithm moved between the bucket and
 * window families, where a burst means nothing: the levels' bursts go.
 */
void rl_levels_merge(struct rl_policy *pol, const struct rl_policy *given, bool family_changed);

/* Is any level of @cfg on (rl_agg is needed)? The admission cap's own words apart. */
bool rl_levels_any(const struct rl_config *cfg);

/* The levels of @cfg, for status and set ("; aggregate /24 /48 1000/s burst 1000, ..."). */
void rl_levels_describe(const struct rl_config *cfg, char *buf, size_t len);

/* The name of level @id: "source", "aggregate", "iface", "new", "admit". */
const char *rl_level_name(unsigned int id);
struct rl_json;
/*
 * Level @id's settings @l as an object of the JSON document @w is in, named
 * for the level (prefixes, rate, unit, burst or limit); nothing when it is off.
 */
void rl_level_json(struct rl_json *w, const struct rl_level *l, unsigned int id);

/*
 * How far level @l's state @state stands at @now: *used the fraction of its
 * limit in use (1 and more: over it, a debt after a race), *credit the cost
 * units that would pass now, *wait_s the seconds until a packet of one unit
 * (64 bytes in byte mode) would. What top and the exporter show.
 */
void rl_level_usage(const struct rl_level *l, __u64 state, __u64 now, double *used, double *credit,
		    double *wait_s);

/* log2 of rl_admit's words for a table of @max_sources IPv4 sources (include/rl_agg.h). */
__u32 rl_admit_bits_for(__u32 max_sources);

/*
 * The key of level @id's state for source @src (unmasked; IPv4 as
 * IPv4-mapped): masked by the prefix level's masks as the XDP program masks
 * it (bpf/level.h, level_key()), or the zero key of a level of the whole
 * interface. A source a trace does not name (rl_key_anon()) stays itself.
 */
void rl_level_key(const struct rl_level *l, unsigned int id, const struct rl_key *src,
		  struct rl_key *out);

/*
 * The levels above the source replayed in userspace (simulate), by the
 * XDP program's steps and in its order: each level checked without a write,
 * then (rl_level_sim_charge()) charged once the source passed. States are
 * made on first use (a full bucket), never forgotten. The admission cap's
 * refusals are remembered per source, with the program's words
 * (rl_admit_word(), rl_admit_seen()): so without the collisions of its
 * table.
 */
struct rl_level_sim {
	const struct rl_level *lvl; /* RL_LVL_N, lvl[id - 1] */
	struct rl_srctab agg; /* prefix aggregates: state, passed and refused packets */
	struct rl_srctab seen; /* the admission cap's refusals: the word in state */
	__u64 one[RL_LVL__COUNT]; /* the states of the levels of the whole interface */
	bool made[RL_LVL__COUNT];
	__u64 limited[RL_LVL__COUNT]; /* packets refused, by level */
	__u64 unadmitted, admitted_seen, agg_new;
};

/* What a check found, for the charge: the states of the prefix and interface levels. */
struct rl_level_held {
	__u64 *st[2];
	struct rl_src *agg;
};

void rl_level_sim_init(struct rl_level_sim *ls, const struct rl_level *lvl);
void rl_level_sim_free(struct rl_level_sim *ls);
/*
 * A packet of @len bytes from @src at @now against the prefix and interface
 * levels, without a write: 0 when each passes (*h for the charge), the id
 * of the first that refuses it, or -ENOMEM.
 */
int rl_level_sim_check(struct rl_level_sim *ls, const struct rl_key *src, __u64 now, __u32 len,
		       struct rl_level_held *h);
/* The packet passed its source too: charge the levels rl_level_sim_check() held. */
void rl_level_sim_charge(struct rl_level_sim *ls, const struct rl_level_held *h, __u64 now,
			 __u32 len);
/*
 * The admission cap, for a source @key (masked) that has no state: 2 when
 * it gets one (seen again, or within the cap), else the verdict of the
 * state refused sources share for a packet of @len bytes: 1 passed, 0
 * refused (counted in limited[RL_LVL_NEW]); -ENOMEM.
 */
int rl_level_sim_admit(struct rl_level_sim *ls, const struct rl_key *key, __u64 now, __u32 len);

#endif /* RL_LEVEL_H */
