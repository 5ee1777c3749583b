/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The limited sources (include/rl_hot.h): a source dropped over its limit
 * is written into its entry of rl_hot, for top. On the drop paths only; a
 * pass never comes here.
 *
 * Includes maps.h and include/ headers only.
 */
#ifndef RL_BPF_HOT_H
#define RL_BPF_HOT_H

#include <linux/bpf.h>
#include "rl_hot.h"
#include "maps.h"

/*
 * Note the source of address words @a0..@a3 (masked) in table @rule under
 * generation @gen. The entry is read first and written only when it holds
 * something else: a flood of one source dirties no cache line after its
 * first drop. A global array indexed directly: no helper call, no stack.
 */
static __always_inline void hot_note(__u32 a0, __u32 a1, __u32 a2, __u32 a3, __u32 rule, __u32 gen)
{
	struct rl_hot_ent *e = &rl_hot.e[rl_hot_idx(a0, a1, a2, a3, rule)];

	if (e->src.addr[3] == a3 && e->src.addr[2] == a2 && e->src.addr[1] == a1 &&
	    e->src.addr[0] == a0 && e->rule == rule && e->gen == (__u16)gen)
		return;
	e->src.addr[0] = a0;
	e->src.addr[1] = a1;
	e->src.addr[2] = a2;
	e->src.addr[3] = a3;
	e->rule = (__u16)rule;
	e->gen = (__u16)gen;
}

#endif /* RL_BPF_HOT_H */
