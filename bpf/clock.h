/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The clocks and what a packet costs: rl_now(), the packet clock of the
 * policy (precise or coarse, or the test clock); rl_precise_now(), the one
 * the sweep and the samples read; packet_cost(); and tick(), rl_tick() with
 * this CPU's last window kept in its counters. Every read of the time goes
 * through here, so that a test replaces it in one place (rl_test_clock).
 *
 * Includes maps.h (rl_cfg, rl_clock) and include/ headers only.
 */
#ifndef RL_BPF_CLOCK_H
#define RL_BPF_CLOCK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "maps.h"

static __always_inline __u64 rl_now(void)
{
	if (rl_test_clock) {
		__u32 zero = 0;
		__u64 *t = bpf_map_lookup_elem(&rl_clock, &zero);

		return t ? *t : 0;
	}
	if (rl_cfg.clock == RL_CLOCK_COARSE)
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

/*
 * The precise clock whatever the policy's (the sweep's timer runs on it, and
 * a coarse tick is too rough to read in a sample), or the test clock.
 */
static __always_inline __u64 rl_precise_now(void)
{
	if (rl_test_clock)
		return rl_now();
	return bpf_ktime_get_ns();
}

/*
 * The length of the frame at @ctx, whose first buffer ends at @end: the
 * whole frame's when it may span buffers (rl_frags), so that a jumbo frame
 * costs and counts all its bytes. Headers are parsed in the first buffer.
 */
static __always_inline __u64 frame_len(struct xdp_md *ctx, void *data, void *end)
{
	if (rl_frags)
		return bpf_xdp_get_buff_len(ctx);
	return end - data;
}

static __always_inline __u64 packet_cost(__u64 len)
{
	/* The bound the parameters were checked against (frames are shorter anyway). */
	if (rl_cfg.params.bytes)
		return len < RL_MAX_FRAME ? len : RL_MAX_FRAME;
	return 1;
}

/*
 * rl_tick() of the policy at @now, for the window algorithms from this
 * CPU's last window when now is still in it: start <= now < start + W with
 * start = k * W is k = floor(now / W) exactly, whatever wrote the pair (two
 * plain stores, another policy's W, a clock that went back in a test), so
 * the check alone keeps it exact. One multiply instead of rl_window()'s five.
 */
static __always_inline __u64 tick(struct rl_kcounters *cnt, __u64 now)
{
	__u64 k, e, w = rl_cfg.params.window_ns;

	if (rl_cfg.params.algo != RL_ALGO_FIXED_WINDOW &&
	    rl_cfg.params.algo != RL_ALGO_SLIDING_WINDOW)
		return rl_vt(&rl_cfg.params, now);
	k = cnt->win_k;
	if (now - cnt->win_start < w && k * w == cnt->win_start)
		return k;
	k = rl_window(&rl_cfg.params, now, &e);
	cnt->win_k = k;
	cnt->win_start = now - e;
	return k;
}

#endif /* RL_BPF_CLOCK_H */
