/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Attaching and detaching the limiter through libxdp, and what is on an interface. */
#ifndef RL_XDP_ATTACH_H
#define RL_XDP_ATTACH_H

#include <stddef.h>
#include <linux/types.h>
#include "rl_common.h"

struct rl_iface;

enum rl_mode {
	RL_MODE_NATIVE = 0,
	RL_MODE_SKB = 1,
};

/* Route libbpf's and libxdp's messages through our log (shown with -v). */
void rl_loader_quiet(void);

/* What is on an interface: consistent, nothing, or what a killed command left. */
enum rl_presence {
	RL_ABSENT, /* neither program nor pins */
	RL_PRESENT, /* our program, using the pinned maps */
	RL_ORPHAN_PROG, /* our program without (its) pins: an attach was killed */
	RL_STALE_PINS, /* pins without the program: a detach was killed */
	RL_FOREIGN_PINS, /* pins in use by another interface (renamed since) */
};
enum rl_presence rl_presence(const struct rl_iface *ifc);

/* Call these holding rl_lock(). */
int rl_attach(const struct rl_iface *ifc, enum rl_mode mode, __u32 max_sources,
	      const struct rl_config *cfg, char *err, size_t errlen);
int rl_detach(const struct rl_iface *ifc, char *err, size_t errlen);

/* The mode the program is attached in ("native", "skb", ...), or "not attached". */
const char *rl_attach_mode(const struct rl_iface *ifc);

#endif /* RL_XDP_ATTACH_H */
