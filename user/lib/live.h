/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What a live limiter runs, read from its pins: for status, set and apply. */
#ifndef RL_LIVE_H
#define RL_LIVE_H

#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"

struct rl_iface;
struct rl_pins;
struct rl_rules_cfg;

/* The live configuration, its slot, and the sizes of the source tables. */
struct rl_live {
	struct rl_config cfg;
	__u32 active;
	__u32 max_sources, max_sources6;
};

/*
 * Read it from the open @pins of @ifc. 0, or -errno with a message naming
 * the interface in @err.
 */
int rl_live_read(const struct rl_iface *ifc, const struct rl_pins *pins, struct rl_live *l,
		 char *err, size_t errlen);

/*
 * What the limiter of @pins runs, read from the program itself: the policy
 * and the rules compiled into its read-only data (.rodata.cfg), from the
 * program the interfaces of this namespace that run these maps run. Either
 * of @cfg and @rules may be NULL.
 *
 * This, not the copies in rl_config and rl_rcfg, is the record of what is
 * live: a change swaps one program in (the commit point) and rewrites the
 * copies after it, so a command killed in between leaves stale copies, which
 * rl_config_read() and rl_rules_read() then read past. 0; -ENOENT if no
 * program of ours on these maps is attached in this namespace (new maps, a
 * limiter of another namespace: the copies are all there is), or if the
 * members of a shared limiter run different programs (a change killed
 * between their swaps: it wrote no copy, the copies are the old state);
 * -errno.
 */
int rl_live_compiled(const struct rl_pins *pins, struct rl_config *cfg, struct rl_rules_cfg *rules);

#endif /* RL_LIVE_H */
