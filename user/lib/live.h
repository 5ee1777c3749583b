/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What a live limiter runs, read from its pins: for status, set and apply. */
#ifndef RL_LIVE_H
#define RL_LIVE_H

#include <stddef.h>
#include <linux/types.h>
#include "maps.h"
#include "rl_common.h"

struct rl_iface;

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

#endif /* RL_LIVE_H */
