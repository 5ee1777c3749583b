/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The per-verdict counting every packet ends with (xdp_ratelimit; bench_steps, as it was).
 * Includes include/ headers only.
 */
#ifndef RL_VERDICT_H
#define RL_VERDICT_H

#include <linux/bpf.h>
#include "rl_common.h"

/* Count a frame of @len bytes under its verdict; returns the verdict. */
static __always_inline int rl_count_verdict(struct rl_counters *cnt, int verdict, __u64 len)
{
	cnt->rx_packets++;
	cnt->rx_bytes += len;
	if (verdict == XDP_DROP) {
		cnt->dropped++;
		cnt->dropped_bytes += len;
	} else {
		cnt->passed++;
		cnt->passed_bytes += len;
	}
	return verdict;
}

/* xdp_ratelimit's counting: two updates, its verdict's packets and bytes. */
static __always_inline int rl_count_pass(struct rl_kcounters *cnt, __u64 len)
{
	cnt->passed++;
	cnt->passed_bytes += len;
	return XDP_PASS;
}

static __always_inline int rl_count_drop(struct rl_kcounters *cnt, __u64 len)
{
	cnt->dropped++;
	cnt->dropped_bytes += len;
	return XDP_DROP;
}

#endif /* RL_VERDICT_H */
