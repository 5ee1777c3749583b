/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet sync, what the XDP object and user/lib/sync_kern.c share: the charge
 * program's batch (an array map) and its arguments (the program's ctx).
 *
 * Counting: with rl_config.sync_count set, each packet that passes the
 * default policy adds its cost units to its source's entry in the counter
 * table that rl_sync4[0] (rl_sync6[0] for IPv6) points to. Two tables per
 * family, rl_sc4a/rl_sc4b (rl_sc6a/rl_sc6b): the agent points the outer map
 * at the other one, which returns after an RCU grace period (the kernel
 * waits for every running program after a map-in-map update), so no packet
 * still adds to the retired table: it is read and emptied exactly.
 */
#ifndef RL_SYNC_H
#define RL_SYNC_H

#include <linux/types.h>
#include "rl_common.h"

/* Sources charged per run of the charge program (its array map's size). */
#define RL_SYNC_BATCH 4096
/*
 * Compare-and-swap attempts of one charge. Unlike a packet, a charge must
 * not be lost to contention: it gives up only after this many lost races
 * (and is then reported as not charged).
 */
#define RL_SYNC_CAS_TRIES 64

/* The value size of rl_sync_status: struct rl_sync_status (user/lib/sync_kern.h) and room to grow. */
#define RL_SYNC_STATUS_SIZE 512

/* One source's remote units; IPv4 sources as IPv4-mapped IPv6 (as rl_state_walk()). */
struct rl_sync_chg {
	struct rl_state_key k;
	__u32 pad;
	__u64 units;
};

/* The charge program's ctx: charge entries [0, n) of rl_chg. */
struct rl_sync_args {
	__u32 n; /* in */
	__u32 charged; /* out: entries whose state was found and updated */
	__u32 lost; /* out: entries given up after RL_SYNC_CAS_TRIES lost races */
	__u32 pad;
};

#endif /* RL_SYNC_H */
