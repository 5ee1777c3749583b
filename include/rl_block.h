/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Block durations (rule option --block DUR), written once for the XDP program
 * and for userspace (simulate --rules, tests).
 *
 * A limit rule with a block duration keeps, per source, the rate state word
 * of rl_algo.h and the time the source is blocked until (0: not blocked).
 * One packet of cost @cost at @now:
 *	blocked (now < until):	dropped, counted blocked; nothing changes
 *				(the rate state is not stepped, so a blocked
 *				source earns no credit while it is blocked);
 *	block over (until <= now): the source starts afresh, as a new source
 *				(rl_initial_state()), and the packet is then
 *				stepped as below;
 *	rl_step() passes:	passed, the new state stored;
 *	rl_step() drops:	dropped, counted limited; with a block duration
 *				the source is blocked until now + block_ns.
 * With block_ns == 0 this is rl_step() alone, and until stays 0.
 *
 * until is an absolute time on the packet clock; now + block_ns saturates at
 * 2^64 - 1 rather than wrapping to a time in the past. Pure function: no
 * helper calls, no division.
 */
#ifndef RL_BLOCK_H
#define RL_BLOCK_H

#include <linux/types.h>
#include "rl_algo.h"

enum rl_block_verdict {
	RL_BLOCK_PASS = 0, /* under the limit: pass */
	RL_BLOCK_LIMITED = 1, /* over the limit: drop (and block, with a duration) */
	RL_BLOCK_BLOCKED = 2, /* the source is blocked: drop */
};

/* A source's state under a limit rule. */
struct rl_block_state {
	__u64 state; /* the rate algorithm's word (rl_step()) */
	__u64 until; /* blocked while now < until; 0: not blocked */
};

/* One packet; returns an enum rl_block_verdict and updates *s. */
RL_INLINE int rl_block_step(const struct rl_params *p, __u64 block_ns, struct rl_block_state *s,
			    __u64 now, __u64 cost)
{
	__u64 next;

	if (s->until) {
		if (now < s->until)
			return RL_BLOCK_BLOCKED;
		s->until = 0;
		s->state = rl_initial_state(p, now);
	}
	if (rl_step(p, s->state, now, cost, &next)) {
		s->state = next;
		return RL_BLOCK_PASS;
	}
	if (block_ns)
		s->until = now + block_ns < now ? ~0ULL : now + block_ns;
	return RL_BLOCK_LIMITED;
}

#endif /* RL_BLOCK_H */
