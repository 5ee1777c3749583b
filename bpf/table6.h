/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPv6 sources in the LRU hash rl_state6: key { address masked by --prefix6
 * (a link-local one whole), generation }, value the whole 64-bit rate
 * state. Out of line (limit_lru6(), with the insertion, new_source6()); an
 * IPv4-mapped source is an IPv4 one and never comes here.
 *
 * Includes state.h, carry.h, sync.h, hot.h, maps.h and include/ headers only.
 */
#ifndef RL_BPF_TABLE6_H
#define RL_BPF_TABLE6_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "maps.h"
#include "sync.h"
#include "state.h"
#include "carry.h"
#include "hot.h"

/* @kind is an enum rl_key_kind: masked by --prefix6, or kept whole (link-local). */
static __always_inline void mask_key6(struct rl_key *k, const struct rl_key *src, int kind,
				      const __u32 *mask6)
{
	if (kind == RL_KEY_LL) {
		*k = *src;
		return;
	}
	k->addr[0] = src->addr[0] & mask6[0];
	k->addr[1] = src->addr[1] & mask6[1];
	k->addr[2] = src->addr[2] & mask6[2];
	k->addr[3] = src->addr[3] & mask6[3];
}

/*
 * An IPv6 source without state: insert it. Return as limit_lru6(), or
 * RL_RETRY_LOOKUP when another CPU inserted the source first.
 */
static __always_inline int new_source6(struct rl_kcounters *cnt, struct rl_state_key *k,
				       const struct rl_key *src, int kind, __u64 now, __u64 cost)
{
	struct rl_state_key pk = {};
	__u64 *prev = NULL, val;
	int pass;

	if (rl_cfg.has_prev) {
		mask_key6(&pk.src, src, kind, rl_cfg.prev_mask6);
		pk.gen = rl_cfg.gen - 1;
		prev = bpf_map_lookup_elem(&rl_state6, &pk);
	}
	pass = first_step(cnt, prev, now, cost, &val);
	pass = inserted(cnt, bpf_map_update_elem(&rl_state6, k, &val, BPF_NOEXIST), pass);
	return counted(pass, cnt, &rl_sync6, k, cost);
}

/*
 * IPv6 source @src (an enum rl_key_kind @kind): 1 within the limit, 0 over
 * it, -1 not tracked. A global function, as limit_lru4(): its frame is not
 * slow_path()'s, which leaves room on the stack for the hit path inlined in
 * the main program.
 */
__noinline int limit_lru6(struct rl_kcounters *cnt, const struct rl_key *src, int kind, __u64 now,
			  __u64 cost)
{
	struct rl_state_key k = { .gen = rl_cfg.gen };
	__u64 *st;
	int ret;

	if (!cnt || !src)
		return -1;
	mask_key6(&k.src, src, kind, rl_cfg.mask6);
	st = bpf_map_lookup_elem(&rl_state6, &k);
	if (!st) {
		int ret = new_source6(cnt, &k, src, kind, now, cost);

		if (ret != RL_RETRY_LOOKUP)
			return ret;
		st = bpf_map_lookup_elem(&rl_state6, &k);
		if (!st) {
			cnt->insert_failed++;
			return -1;
		}
	}
	ret = step_state(cnt, st, now, cost, &rl_sync6, &k, 0);
	if (!ret) /* over its limit: noted for top */
		hot_note(k.src.addr[0], k.src.addr[1], k.src.addr[2], k.src.addr[3], 0, k.gen);
	return ret;
}

#endif /* RL_BPF_TABLE6_H */
