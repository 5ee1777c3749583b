/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sweep of rl_sets4 (the timer in rl_sweep, armed by rl_sweep_arm in
 * xdp_ratelimit.bpf.c): the rewrite of the states the clock has left behind.
 *
 * Includes clock.h, maps.h and include/ headers only.
 */
#ifndef RL_BPF_SWEEP_H
#define RL_BPF_SWEEP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
#include "rl_sa.h"
#include "maps.h"
#include "clock.h"

#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1 /* the sweep's timer: the packet clock's */
#endif

/*
 * The sweep of rl_sets4. A slot keeps its state mod 2^m, read back near the
 * clock: a source idle for 2^(m-1) vt would be read as ahead (stricter than
 * it should be). The sweep rewrites every state the clock has left behind
 * to an equivalent one near the clock (a full bucket; empty counts), so that
 * none drifts that far. It runs from a BPF timer: every RL_SA_SWEEP_TICK_NS
 * it sweeps 1/2^RL_SA_SWEEP_PARTS of the sets, so a whole pass takes
 * RL_SA_SWEEP_PASS_NS whatever the table's size, with no daemon. Every load
 * arms it from rl_sweep_arm() (xdp_ratelimit.bpf.c), taking it over from the
 * program loaded before (rl_sweep is pinned and reused). The callback reads
 * the live policy from rl_config rather than from its own program's
 * constants: the timer keeps calling the program that armed it, which set
 * may since have replaced.
 * Every rewrite is a compare-and-swap from the word read: a packet that
 * updated the slot in between wins, and its state is current anyway.
 */
struct sweep_ctx {
	__u64 ref, behind, idm, sm, gen, cb, id_mask;
	__u32 start, mask;
	__u64 swept;
};

/*
 * Set @idx. A global function, verified once for any context: inside the
 * loop's callback, the verifier followed it once for each state sweep_cb()
 * could reach the loop in (every algorithm's reference and kind of state),
 * eight slots each, and verifying the sweep cost as much as the XDP program
 * (attach loads both). 1 to stop the loop.
 */
__noinline int rl_sweep_set(__u32 idx, struct sweep_ctx *c)
{
	struct rl_sa_set *set;
	__u64 w, st, out, k, id;
	int i;

	if (!c)
		return 1;
	set = bpf_map_lookup_elem(&rl_sets4, &idx);
	if (!set)
		return 1;
	for (i = 0; i < RL_SA_WAYS; i++) {
		w = *(volatile __u64 *)&set->w[i];
		if (!(w & RL_SA_USED) || (w & RL_SA_PEND) ||
		    (w & (3ULL << RL_SA_GEN_SHIFT)) != c->gen)
			continue;
		st = rl_sa_get(w, c->ref, rl_sa_bits);
		if (!c->cb) {
			/* A TAT behind the clock is a full bucket, however far behind. */
			if ((__s64)(st - c->behind) >= 0)
				continue;
			out = c->behind;
		} else {
			/* A window id not k - 1, k or k + 1: empty counts, as a new source's. */
			k = c->ref >> c->cb;
			id = st >> c->cb;
			if (((id - k + 1) & c->id_mask) <= 2)
				continue;
			out = ((k - 2) & c->id_mask) << c->cb;
		}
		if (__sync_val_compare_and_swap(&set->w[i], w, (w & ~c->sm) | (out & c->sm)) == w)
			c->swept++;
	}
	return 0;
}

static long sweep_set(__u64 n, void *data)
{
	struct sweep_ctx *c = data;

	return rl_sweep_set((c->start + (__u32)n) & c->mask, c) ? 1 : 0;
}

static int sweep_cb(void *map, __u32 *key, struct rl_sweep *sw)
{
	__u32 zero = 0, bits = rl_sa_bits;
	struct sweep_ctx c = {};
	struct rl_config *cfg;
	struct rl_ctl *ctl;
	__u64 now;

	ctl = bpf_map_lookup_elem(&rl_ctl, &zero);
	cfg = ctl ? bpf_map_lookup_elem(&rl_config, &ctl->active) : NULL;
	if (cfg && cfg->table4 == RL_TABLE4_SA) {
		now = rl_precise_now();
		c.id_mask = cfg->params.id_mask;
		c.cb = rl_sa_count_bits(&cfg->params);
		c.ref = rl_sa_ref(&cfg->params, now);
		c.behind = c.ref - RL_SA_SWEEP_SLACK;
		c.idm = rl_sa_id_mask(bits);
		c.sm = rl_sa_state_mask(bits);
		c.gen = (__u64)(cfg->gen & 3) << RL_SA_GEN_SHIFT;
		c.mask = (1U << bits) - 1;
		c.start = (__u32)sw->next & c.mask;
		bpf_loop(1U << (bits - RL_SA_SWEEP_PARTS), sweep_set, &c, 0);
		sw->swept += c.swept;
		sw->next = (c.start + (1U << (bits - RL_SA_SWEEP_PARTS))) & c.mask;
		if (!sw->next)
			sw->passes++;
	}
	bpf_timer_start(&sw->t, RL_SA_SWEEP_TICK_NS, 0);
	return 0;
}

#endif /* RL_BPF_SWEEP_H */
