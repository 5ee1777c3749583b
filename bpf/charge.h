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
 * charge_wide4(), charge_sa6()); the LRU table's is here.
 *
 * Includes table4_sa.h, table4_wide.h, table6_sa.h, maps.h and include/
 * headers only.
 */
#ifndef RL_BPF_CHARGE_H
#define RL_BPF_CHARGE_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"
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
