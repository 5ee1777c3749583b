/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fleet sync counting (include/rl_sync.h): what a passed packet adds to its
 * source in the live counter table of rl_sync4 or rl_sync6, which the agent
 * drains (user/lib/sync_kern.c). Compiled in only with rl_cfg.sync_count:
 * otherwise the verifier removes every call.
 *
 * Includes maps.h and include/ headers only.
 */
#ifndef RL_BPF_SYNC_H
#define RL_BPF_SYNC_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "maps.h"

/*
 * Sync counting: add a passed packet's @cost to its source in the live
 * counter table @outer points to. Atomic adds: one source's packets on many
 * CPUs are all counted. A new source is inserted at 0 (another CPU may
 * insert it first: EEXIST is fine) and added to like the others. Units that
 * cannot be counted (table full) are counted in sync_lost. Out of line, and
 * called only when sync_count is compiled in: otherwise the verifier
 * removes the call. Returns the caller's verdict (1: passed), so that the
 * caller keeps one value fewer across the call: the main program's stack
 * has no room for another spill (slow_path() and its subprograms).
 */
static __noinline int sync_count(struct rl_kcounters *cnt, void *outer, const void *key, __u64 cost)
{
	__u64 *u;
	void *m;

	if (!cnt || !key)
		return 1;
	m = bpf_map_lookup_elem(outer, (const void *)&rl_sync_zero);
	if (!m)
		return 1;
	u = bpf_map_lookup_elem(m, key);
	if (!u) {
		bpf_map_update_elem(m, key, (const void *)&rl_sync_zero, BPF_NOEXIST);
		u = bpf_map_lookup_elem(m, key);
		if (!u) {
			cnt->sync_lost += cost;
			return 1;
		}
	}
	__sync_fetch_and_add(u, cost);
	return 1;
}

/* @ret, after counting a pass when sync counting is compiled in. */
static __always_inline int counted(int ret, struct rl_kcounters *cnt, void *outer, const void *key,
				   __u64 cost)
{
	if (rl_cfg.sync_count && ret == 1)
		return sync_count(cnt, outer, key, cost);
	return ret;
}

#endif /* RL_BPF_SYNC_H */
