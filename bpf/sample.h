/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Drop samples (include/rl_events.h): while a reader is on (rl_evctl), one
 * dropped packet in one_in, at most cap.limit a second, goes to the ring
 * rl_events with its first bytes and its source. sample() is what a drop
 * path calls; everything past its first check is out of line.
 *
 * Includes parsing.h, clock.h, maps.h and include/ headers only.
 */
#ifndef RL_BPF_SAMPLE_H
#define RL_BPF_SAMPLE_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_events.h"
#include "maps.h"
#include "clock.h"
#include "parsing.h"

/*
 * A dropped packet that sample()'s 1-in-one_in countdown (@pc, this CPU's:
 * no division) let through: reset the countdown, then is it within the cap
 * of the current second of the clock? The shared word holds the second
 * (now / 10^9, from the reciprocal of rl_window(): exact, no division) in
 * its high 32 bits and the samples sent in it in the low 32;
 * compare-and-swap as step_state(), so the cap is exact across CPUs
 * (RL_CAS_TRIES lost races count as over it). Not rl_fixed_step() itself:
 * its general packing spills registers, on a stack the packet path has
 * mostly used. Returns the time of the pick, or 0. A global function, as
 * sample_send(): only a picked drop calls them, and apart (rather than one
 * inside the other) they fit the stack; global, the verifier checks each
 * once, not once for each of the drop paths that call sample().
 */
__noinline __u64 sample_pick(struct rl_evcpu *pc)
{
	struct rl_evctl *ev = &rl_evctl;
	__u64 now, sec, old, next, e;
	int i;

	if (!pc)
		return 0;
	pc->skip = ev->one_in ? ev->one_in - 1 : 0;
	now = rl_precise_now();
	sec = (__u32)rl_window(&ev->cap, now, &e);
	for (i = 0; i < RL_CAS_TRIES; i++) {
		old = *(volatile __u64 *)&ev->win;
		if (old >> 32 != sec)
			next = sec << 32 | 1;
		else if ((__u32)old < ev->cap.limit)
			next = old + 1;
		else
			break;
		if (__sync_val_compare_and_swap(&ev->win, old, next) == old)
			return now ?: 1;
	}
	pc->capped++;
	return 0;
}

/*
 * Write the sample of a picked packet to rl_events: @reason an enum
 * rl_ev_reason in its low 16 bits, the level above the source that refused
 * it in its high 16 (bpf/aggregate.h, decide_level()). 1: sent; 0: the ring
 * was full.
 */
__noinline int sample_send(struct xdp_md *ctx, __u64 now, __u32 reason)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	struct rl_evcpu *pc;
	struct rl_event *e;
	__u32 bad, zero = 0;
	__be16 proto;
	__u64 len, n;
	int nd;

	pc = bpf_map_lookup_elem(&rl_evcpu, &zero);
	if (!pc)
		return 0;
	e = bpf_ringbuf_reserve(&rl_events, sizeof(*e), 0);
	if (!e) {
		pc->lost++;
		return 0;
	}
	/* Whole: what the frame does not fill must not carry old ring contents out. */
	__builtin_memset(e, 0, sizeof(*e));
	e->time_ns = now;
	e->ifindex = ctx->ingress_ifindex;
	e->reason = reason & 0xffff;
	e->level = reason >> 16;
	len = bpf_xdp_get_buff_len(ctx);
	e->len = len;
	n = len < RL_EV_SNAP ? len : RL_EV_SNAP;
	if (n > 0 && !bpf_xdp_load_bytes(ctx, 0, e->data, n))
		e->caplen = n;
	/* The source, parsed again: the packet path keeps no copy of it for us. */
	if (!parse_eth(&c, &proto, &bad)) {
		if (proto == bpf_htons(ETH_P_IP))
			parse_ipv4(&c, &e->src, &bad);
		else if (proto == bpf_htons(ETH_P_IPV6))
			parse_ipv6(&c, &e->src, &bad, &nd);
	}
	/*
	 * No wakeup: waking the reader costs microseconds per sample (most of
	 * the cost of sampling), and it polls every 100 ms anyway. Half a ring
	 * is over a quarter of a second at the highest cap: then wake it.
	 */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&rl_events, BPF_RB_AVAIL_DATA) >
					      (RL_EV_RING_BYTES >> 1) ?
				      BPF_RB_FORCE_WAKEUP :
				      BPF_RB_NO_WAKEUP);
	pc->sent++;
	return 1;
}

/*
 * The one check sampling costs a drop path while nobody reads: the reader's
 * switch, one load and a test. While it reads, the 1-in-N countdown is in
 * line too (the per-CPU lookup is inlined by the verifier; its key is read
 * from rl_sync_zero, not the stack): only a picked drop pays the calls.
 */
static __always_inline void sample(struct xdp_md *ctx, __u32 reason)
{
	struct rl_evcpu *pc;
	__u64 now;
	int ret;

	if (!*(volatile __u32 *)&rl_evctl.on)
		return;
	pc = bpf_map_lookup_elem(&rl_evcpu, (const void *)&rl_sync_zero);
	if (!pc)
		return;
	if (pc->skip) {
		pc->skip--;
		return;
	}
	now = sample_pick(pc);
	if (!now)
		return;
	ret = sample_send(ctx, now, reason);
	/*
	 * Use the answer: with it unused, clang may leave the subprogram's
	 * return register unset, and the verifier refuses a subprogram that
	 * may return whatever r0 held (a stack pointer).
	 */
	asm volatile("" : : "r"(ret));
}

#endif /* RL_BPF_SAMPLE_H */
