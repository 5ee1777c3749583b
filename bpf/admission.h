/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The admission cap (--admit-rate, include/rl_agg.h): a source the table
 * does not hold gets a state of its own only if the cap's bucket has
 * credit, or if it is seen again (a packet of it within RL_ADMIT_SEEN_NS of
 * one refused a state, its word of rl_admit not taken since by another
 * refusal). A refused source is inserted nowhere: its packet is limited with
 * every other refused source's, as one source of the policy (level
 * RL_LVL_NEW). The source tables call admit4() or admit6() on a miss, before
 * they insert; compiled in only with the cap on.
 *
 * Includes level.h, carry.h, table6_sa.h, maps.h and include/ headers only.
 */
#ifndef RL_BPF_ADMISSION_H
#define RL_BPF_ADMISSION_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_agg.h"
#include "rl_common.h"
#include "maps.h"
#include "carry.h"
#include "level.h"
#include "table6_sa.h"

/* Is the admission cap on, for the family @fam? A constant of the program. */
static __always_inline int admit_on(__u32 fam)
{
	return lvl_on(RL_LVL_ADMIT, fam);
}

/*
 * A source of hash @h (rl_admit_hash()) that no table holds (@any: a key on
 * the stack, any: the levels of the whole interface ignore it): RL_NOT_HELD
 * when it gets a state of its own (seen again, or within the cap: insert
 * it), else the verdict of the refused sources' shared state for a packet
 * of @len bytes: 1, RL_V_REFUSED(RL_LVL_NEW), RL_CAS_LOST, or -1 when that
 * state cannot be made.
 */
static __always_inline int admit(struct rl_kcounters *cnt, const struct rl_key *any, __u32 h,
				 __u64 now, __u64 len)
{
	__u32 idx = h & ((1U << rl_admit_bits) - 1);
	__u64 *w;
	int v;

	w = bpf_map_lookup_elem(&rl_admit, &idx);
	if (w && rl_admit_seen(*(volatile __u64 *)w, h, now)) {
		cnt->admitted_seen++;
		return RL_NOT_HELD;
	}
	if (level_do(cnt, any, LVL_WHICH(LVL_OP_STEP, RL_LVL_ADMIT, RL_RULE_SLOTS), 1, now) == 1)
		return RL_NOT_HELD;
	/* Refused a state: remembered (a plain store: a lost one only forgets a refusal). */
	if (w)
		*(volatile __u64 *)w = rl_admit_word(h, now);
	cnt->unadmitted++;
	v = level_do(cnt, any, LVL_WHICH(LVL_OP_STEP, RL_LVL_NEW, RL_RULE_SLOTS), len, now);
	return v == 0 ? RL_V_REFUSED(RL_LVL_NEW) : v;
}

/*
 * IPv4 source @addr (masked by mask4), which the set table does not hold,
 * for a packet of @len bytes (or its cost: the same to the policy's level):
 * admit(). A source of the previous generation is not new: it is carried
 * over (a set). A global function: verified once, called only on a miss.
 */
__noinline int admit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 len)
{
	__u32 a[4] = { 0, 0, 0, addr };
	__u64 st;

	if (!cnt)
		return -1;
	if (rl_cfg.has_prev && prev_state4(addr, now, &st))
		return RL_NOT_HELD;
	return admit(cnt, (const struct rl_key *)a, rl_admit_hash(a, 1, rl_cfg.sa_key), now, len);
}

/*
 * IPv6 source @src (unmasked), which rl_sets6 does not hold, for a packet
 * of @len bytes (or its cost): admit(), as admit4(). A source of the
 * previous generation is not new: it is carried over (sa6_prev()); a
 * link-local source keyed whole, as table6_sa.h keys it. A global function:
 * verified once, called only on a miss (limit_v6()).
 */
__noinline int admit6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 now, __u64 len)
{
	__u32 a[4];
	__u64 st;
	int i, ll;

	if (!cnt || !src)
		return -1;
	if (rl_cfg.has_prev && sa6_prev(src, &st))
		return RL_NOT_HELD;
	ll = link_local6(src->addr[0]);
	for (i = 0; i < 4; i++)
		a[i] = ll ? src->addr[i] : src->addr[i] & rl_cfg.mask6[i];
	return admit(cnt, src, rl_admit_hash(a, 0, rl_cfg.sa_key), now, len);
}

#endif /* RL_BPF_ADMISSION_H */
