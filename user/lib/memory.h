/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A limiter's kernel memory: what its maps charge (bytes_memlock, as
 * bpftool shows it), for status, stats and the tests that bound it
 * (docs/design.md, "Memory").
 */
#ifndef RL_MEMORY_H
#define RL_MEMORY_H

#include <linux/types.h>
#include "maplist.h"

struct rl_memory {
	__u64 total; /* every map below */
	__u64 map[RL_N_MAPS]; /* each of the limiter's maps, in struct rl_pins order */
	/*
	 * The maps of its XDP program that are not pinned (its read-only
	 * data, .rodata.cfg, rl_clock): 0 if no program of ours runs it in
	 * this namespace.
	 */
	__u64 prog;
	__u32 max_sources4, max_sources6; /* the sources it can track (--max-sources, -6) */
};

/* What the map @fd charges: "memlock:" of /proc/self/fdinfo/@fd. 0 or -errno. */
int rl_map_memlock(int fd, __u64 *bytes);
/* The memory of the limiter whose maps are @pins. 0 or -errno. */
int rl_memory_read(const struct rl_pins *pins, struct rl_memory *m);

#endif /* RL_MEMORY_H */
