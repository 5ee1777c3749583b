/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The limits of sync --interval, below both the option table that checks
 * them and the sync agent that runs at them: the table must not depend on
 * the agent (and, through it, on the kernel side of the sync). sync_agent.h
 * includes it.
 */
#ifndef RL_SYNC_DEFS_H
#define RL_SYNC_DEFS_H

#define RL_SYNC_INTERVAL_DEFAULT_NS 100000000ULL /* 100 ms */
#define RL_SYNC_INTERVAL_MIN_NS	    1000000ULL /* 1 ms: below, a round trip takes longer */
#define RL_SYNC_INTERVAL_MAX_NS	    60000000000ULL /* 1 min: past it, keys would live for ages */

#endif /* RL_SYNC_DEFS_H */
