/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reading and writing a limiter's maps: configuration slots, counters, sources. */
#ifndef RL_MAPS_H
#define RL_MAPS_H

#include <linux/types.h>
#include "rl_common.h"

/* File descriptors of the pinned maps of one attachment (see pins.h). */
struct rl_pins {
	int state, config, ctl, counters;
};

/* The live configuration and its slot. */
int rl_config_read(const struct rl_pins *pins, struct rl_config *cfg, __u32 *active);
/* Write @cfg into the slot not in use, then make it live with one 32-bit write. */
int rl_config_swap(const struct rl_pins *pins, const struct rl_config *cfg, __u32 active);
/*
 * After a set that made slot @live live: move every source's state to the new
 * generation (see migrate.c) and then stop the lookups of the old one.
 * *moved counts the states moved.
 */
int rl_migrate(const struct rl_pins *pins, const struct rl_config *cfg, __u32 live, __u64 *moved);
/* The per-CPU counters in map @map_fd, summed over every possible CPU. */
int rl_counters_sum(int map_fd, struct rl_counters *sum);
/* Counters summed over CPUs. */
int rl_counters_read(const struct rl_pins *pins, struct rl_counters *sum);
/* Sources tracked under generation @gen (a walk of the table: not for every second). */
int rl_count_sources(const struct rl_pins *pins, __u32 gen, __u64 *n);

#endif /* RL_MAPS_H */
