/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPv4 sources in the LRU hash rl_state4 (RL_TABLE4_LRU): key { masked
 * address, generation }, value the whole 64-bit rate state. The hit's first
 * round in line (lru_hit4()), the rest out of line (limit_lru4(), with the
 * insertion of a new source, new_source4()).
 *
 * Includes state.h, carry.h, clock.h, sync.h, maps.h and include/ headers
 * only.
 */
#ifndef RL_BPF_TABLE4_LRU_H
#define RL_BPF_TABLE4_LRU_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "maps.h"
#include "clock.h"
#include "sync.h"
#include "state.h"
#include "carry.h"

/*
 * A source without state in rl_state4: insert it. Return as limit_lru4(),
 * or RL_RETRY_LOOKUP when another CPU inserted the source first. Inlined in
 * limit_lru4(), itself out of line.
 */
static __always_inline int new_source4(struct rl_kcounters *cnt, struct rl_state_key4 *k, __u64 now,
				       __u64 cost)
{
	__u64 *prev = NULL, val, pv;
	int pass;

	if (rl_cfg.has_prev && prev_state4(k->addr, now, &pv))
		prev = &pv;
	pass = first_step(cnt, prev, now, cost, &val);
	pass = inserted(cnt, bpf_map_update_elem(&rl_state4, k, &val, BPF_NOEXIST), pass);
	/* Counted here, not by the caller: its frame has no room for what that keeps live. */
	return counted(pass, cnt, &rl_sync4, k, cost);
}

/*
 * 1: within the limit; 0: over it; -1: the source could not be tracked
 * (rl_state4). Everything but lru_hit4()'s hit, after it (@known: its
 * answer, or 0), so that a miss is looked up once and a race counts against
 * RL_CAS_TRIES. A global function, as limit_sa4(), whose frame is not the
 * caller's (the main program's and slow_path()'s, with the insertion's under
 * them, would pass the verifier's 512 bytes).
 */
__noinline int limit_lru4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost, int known)
{
	struct rl_state_key4 k = { .addr = addr, .gen = rl_cfg.gen };
	__u64 *st = NULL;

	if (!cnt)
		return -1;
	if (known != RL_NOT_HELD)
		st = bpf_map_lookup_elem(&rl_state4, &k);
	if (!st) {
		int ret = new_source4(cnt, &k, now, cost);

		if (ret != RL_RETRY_LOOKUP)
			return ret;
		st = bpf_map_lookup_elem(&rl_state4, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	return step_state(cnt, st, now, cost, &rl_sync4, &k, known == RL_ROUND_LOST);
}

/*
 * The first round of limit_lru4() for a source rl_state4 holds, in line in
 * the main program, which saves the hit a BPF-to-BPF call and its return
 * (their cost: docs/benchmarks.md). As limit_lru4(), or RL_NOT_HELD or
 * RL_ROUND_LOST (the compare-and-swap lost a race): limit_lru4() goes on.
 */
static __always_inline int lru_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	struct rl_state_key4 k = { .addr = addr, .gen = rl_cfg.gen };
	__u64 *st = bpf_map_lookup_elem(&rl_state4, &k), old, next;

	if (!st)
		return RL_NOT_HELD;
	old = *(volatile __u64 *)st;
	if (!rl_step_at(&rl_cfg.params, old, now, tick(cnt, now), cost, &next))
		return 0;
	if (__sync_val_compare_and_swap(st, old, next) == old)
		return counted(1, cnt, &rl_sync4, &k, cost);
	cnt->cas_retries++;
	return RL_ROUND_LOST;
}

#endif /* RL_BPF_TABLE4_LRU_H */
