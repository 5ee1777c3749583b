/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Fleet sync's charge, the work of the syscall program rl_charge_prog
 * (xdp_ratelimit.bpf.c; user/lib/sync_kern.c runs it with
 * BPF_PROG_TEST_RUN): the remote units of entries [0, n) of rl_chg into the
 * sources' states, with rl_charge() in a compare-and-swap loop, so that it
 * is atomic against the packet path (a packet's step and a charge never
 * overwrite each other). Built for the same configuration as the XDP
 * program: same parameters, same clock. Entries of another generation (a
 * set came in between) and sources without state are skipped: nothing to
 * charge. The charge of each set table is that table's (charge_sa4(),
 * charge_wide4(), charge_sa6()); the LRU table's and the limit rules'
 * (charge_rule()) are here.
 *
 * Includes table4_sa.h, table4_wide.h, table6_sa.h, maps.h and include/
 * headers only.
 */
#ifndef RL_BPF_CHARGE_H
#define RL_BPF_CHARGE_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_block.h"
#include "rl_common.h"
#include "rl_rules.h"
#include "rl_sync.h"
#include "maps.h"
#include "table4_sa.h"
#include "table4_wide.h"
#include "table6_sa.h"

/* What charge_one() counts over the batch. */
struct charge_loop {
	__u64 now;
	/* Counted here, written to the ctx at the end: the verifier refuses a ctx pointer kept. */
	__u32 charged, lost;
};

/*
 * The charge of @units to a limit rule's source @k (its slot and generation
 * in the gen word, RL_SYNC_RULE_GEN()): on its state in rl_rstate, with the
 * rule's own parameters, by compare-and-swap as rule_block_step() passes a
 * packet. A rule gone or given to another (the generation differs) and a
 * source without state are skipped (0); a blocked source has nothing to
 * charge (its state starts afresh when the block ends): 1, as charged. -1:
 * RL_CAS_TRIES races lost. A global function: verified once, for any rule.
 */
__noinline int charge_rule(const struct rl_state_key *k, __u64 now, __u64 units)
{
	struct rl_rstate_key rk = {};
	const struct rl_krule *r = NULL;
	struct rl_block_state *s;
	__u32 slot, i;
	__u64 old, next;
	int t;

	if (!k)
		return 0;
	slot = RL_SYNC_GEN_SLOT(k->gen);
	for (i = 0; i < RL_RULE_SLOTS && i < rl_rules.n; i++)
		if (rl_rules.r[i].slot == slot) {
			r = &rl_rules.r[i];
			break;
		}
	if (!r || r->action != RL_RULE_LIMIT || r->gen != (k->gen & 0xffff))
		return 0;
	rk.src = k->src;
	rk.slot = slot;
	rk.gen = r->gen;
	s = bpf_map_lookup_elem(&rl_rstate, &rk);
	if (!s)
		return 0;
	for (t = 0; t < RL_CAS_TRIES; t++) {
		if (*(volatile __u64 *)&s->until)
			return 1;
		old = *(volatile __u64 *)&s->state;
		if (!rl_charge(&r->cfg.params, old, now, units, &next) ||
		    __sync_val_compare_and_swap(&s->state, old, next) == old)
			return 1;
	}
	return -1;
}

static long charge_one(__u64 i, void *data)
{
	struct charge_loop *lc = data;
	struct rl_state_key4 k4;
	struct rl_sync_chg *e;
	__u32 idx = (__u32)i;
	__u64 *st, old, next;
	int t;

	e = bpf_map_lookup_elem(&rl_chg, &idx);
	if (!e)
		return 1;
	if (rl_rules.n && (e->k.gen & RL_SYNC_GEN_RULE)) {
		int r = charge_rule(&e->k, lc->now, e->units);

		if (r > 0)
			lc->charged++;
		else if (r < 0)
			lc->lost++;
		return 0;
	}
	if (e->k.gen != rl_cfg.gen)
		return 0;
	if (e->k.src.addr[0] || e->k.src.addr[1] || e->k.src.addr[2] != bpf_htonl(0xffff) ||
	    rl_cfg.table4 != RL_TABLE4_LRU) {
		int r;

		if (e->k.src.addr[0] || e->k.src.addr[1] || e->k.src.addr[2] != bpf_htonl(0xffff))
			r = charge_sa6(&e->k.src, lc->now, e->units);
		else if (rl_cfg.table4 == RL_TABLE4_WIDE)
			r = charge_wide4(e->k.src.addr[3], lc->now, e->units);
		else
			r = charge_sa4(e->k.src.addr[3], lc->now, e->units);
		if (r > 0)
			lc->charged++;
		else if (r < 0)
			lc->lost++;
		return 0;
	}
	k4.addr = e->k.src.addr[3];
	k4.gen = e->k.gen;
	st = bpf_map_lookup_elem(&rl_state4, &k4);
	if (!st)
		return 0;
	for (t = 0; t < RL_SYNC_CAS_TRIES; t++) {
		old = *(volatile __u64 *)st;
		if (!rl_charge(&rl_cfg.params, old, lc->now, e->units, &next) ||
		    __sync_val_compare_and_swap(st, old, next) == old) {
			lc->charged++;
			return 0;
		}
	}
	lc->lost++;
	return 0;
}

#endif /* RL_BPF_CHARGE_H */
