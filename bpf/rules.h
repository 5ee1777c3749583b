/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Rules in the XDP program (docs/design.md, "Rules in the data path"). The
 * rule set but "default" is compiled in (rl_rules, like rl_cfg); when there
 * are rules, every packet that one may match (rules_may_match(), in line)
 * goes through rules_path(), which returns the verdict of the rule that
 * matched, or -1 to let the default rule (the code that was there before
 * rules) decide. With no rules, rl_rules.n is the constant 0 and the
 * verifier removes all of this. Its maps and rl_rules are maps.h's.
 *
 * Includes aggregate.h (a limit rule's levels), parsing.h, verdict.h,
 * clock.h, sync.h, maps.h, syncookie.h and include/ headers only.
 */
#ifndef RL_BPF_RULES_H
#define RL_BPF_RULES_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_block.h"
#include "rl_rules.h"
#include "maps.h"
#include "clock.h"
#include "hot.h"
#include "parsing.h"
#include "syncookie.h"
#include "verdict.h"
#include "aggregate.h"
#include "sync.h"

/*
 * A packet under the limit rule @r: rl_block_step() on the source's state
 * under that rule, compare-and-swap on each of its two words. The rate word
 * is exact across CPUs as in the default rule; a block starts once (until
 * goes from 0 to its end by one CAS) and ends once (one CPU wins the CAS of
 * until back to 0 and restarts the state). Between that CAS and the restart,
 * a packet of the same source on another CPU may still be stepped against
 * the old word: that race is the only inexactness (see the design notes).
 */
static __always_inline int rule_block_step(const struct rl_krule *r, struct rl_block_state *s,
					   __u64 now, __u64 cost)
{
	__u64 old, next, until;
	int i;

	for (i = 0; i < RL_CAS_TRIES; i++) {
		until = *(volatile __u64 *)&s->until;
		if (until) {
			if (now < until)
				return RL_BLOCK_BLOCKED;
			if (__sync_val_compare_and_swap(&s->until, until, 0) == until)
				*(volatile __u64 *)&s->state =
					rl_initial_state(&r->cfg.params, now);
			continue;
		}
		old = *(volatile __u64 *)&s->state;
		if (rl_step(&r->cfg.params, old, now, cost, &next)) {
			if (__sync_val_compare_and_swap(&s->state, old, next) == old)
				return RL_BLOCK_PASS;
			continue;
		}
		if (r->block_ns) {
			until = now + r->block_ns < now ? ~0ULL : now + r->block_ns;
			__sync_val_compare_and_swap(&s->until, 0, until);
		}
		return RL_BLOCK_LIMITED;
	}
	return -1;
}

/*
 * The verdict of limit rule @r for source @src at @now (the time its levels
 * were checked at): an enum rl_block_verdict, -1 untracked. A pass is
 * counted for fleet sync under the state's key.
 */
static __noinline int rule_limit(struct rl_kcounters *cnt, const struct rl_krule *r,
				 const struct rl_key *src, __u64 len, __u64 now)
{
	struct rl_rstate_key k = {};
	struct rl_block_state *s, init = {};
	__u64 cost;
	int i;

	if (!r || !src)
		return -1;
	cost = r->cfg.params.bytes ? (len < RL_MAX_FRAME ? len : RL_MAX_FRAME) : 1;
	k.slot = r->slot;
	k.gen = r->gen;
	if (!src->addr[0] && !src->addr[1] && src->addr[2] == bpf_htonl(0xffff)) {
		k.src.addr[2] = src->addr[2];
		k.src.addr[3] = src->addr[3] & r->cfg.mask4;
	} else if ((src->addr[0] & bpf_htonl(RL_LL_MASK)) == bpf_htonl(RL_LL_PREFIX)) {
		k.src = *src;
	} else {
		k.src.addr[0] = src->addr[0] & r->cfg.mask6[0];
		k.src.addr[1] = src->addr[1] & r->cfg.mask6[1];
		k.src.addr[2] = src->addr[2] & r->cfg.mask6[2];
		k.src.addr[3] = src->addr[3] & r->cfg.mask6[3];
	}
	for (i = 0; i < 2; i++) {
		s = bpf_map_lookup_elem(&rl_rstate, &k);
		if (s) {
			int v = rule_block_step(r, s, now, cost);

			/* Over its limit: noted for top, under the rule's slot. */
			if (v == RL_BLOCK_LIMITED)
				hot_note(k.src.addr[0], k.src.addr[1], k.src.addr[2], k.src.addr[3],
					 (__u32)k.slot + 1, k.gen);
			if (rl_cfg.sync_count && v == RL_BLOCK_PASS)
				sync_count(cnt, &rl_syncr, &k, cost);
			return v;
		}
		/* A new source; EEXIST: another CPU inserted it first, look again. */
		init.state = rl_initial_state(&r->cfg.params, now);
		if (bpf_map_update_elem(&rl_rstate, &k, &init, BPF_NOEXIST) &&
		    bpf_map_lookup_elem(&rl_rstate, &k) == NULL)
			return -1;
	}
	return -1;
}

/*
 * The verdict of rule @idx (in rl_rules.r[]) for the packet @pi of @len
 * bytes, counted in the rule's and the interface's counters. A global
 * function: the verifier checks it once, for any @idx, rather than once for
 * each rule that could match (which exceeds its budget with many rules).
 */
__noinline int rl_rule_apply(__u32 idx, const struct rl_pkt_info *pi, __u64 len)
{
	const struct rl_krule *r;
	struct rl_rule_counters *rc;
	struct rl_kcounters *cnt;
	__u32 slot, zero = 0;
	int pass, v;

	if (!pi || idx >= RL_RULE_SLOTS)
		return XDP_PASS;
	r = &rl_rules.r[idx];
	cnt = bpf_map_lookup_elem(&rl_counters, &zero);
	slot = r->slot;
	rc = bpf_map_lookup_elem(&rl_rcnt, &slot);
	if (!cnt || !rc)
		return XDP_PASS; /* cannot happen: slots are below max_entries */
	if (r->action == RL_RULE_ALLOW) {
		rc->allowed++;
		pass = 1;
	} else if (r->action == RL_RULE_DENY) {
		rc->denied++;
		pass = 0;
	} else {
		/* The rule's levels first (bpf/aggregate.h), charged when the source passes. */
		__u64 now = rl_now();

		v = rule_agg_check(cnt, r, idx, &pi->src, len, now);
		if (!v)
			v = rule_limit(cnt, r, &pi->src, len, now);
		if (v <= RL_V_LEVEL) {
			if (RL_V_LEVEL_OF(v) == RL_LVL_PREFIX)
				rc->agg_limited++;
			else
				rc->iface_limited++;
			pass = 0;
		} else if (v == RL_BLOCK_PASS) {
			rule_agg_charge(cnt, r, idx, &pi->src, len, now);
			pass = 1;
		} else if (v == RL_BLOCK_LIMITED) {
			rc->limited++;
			pass = 0;
		} else if (v == RL_BLOCK_BLOCKED) {
			rc->blocked++;
			pass = 0;
		} else {
			/* Untracked (table or CAS): the interface's --on-insert-fail. */
			cnt->insert_failed++;
			pass = rl_cfg.fail_policy != RL_FAIL_DROP;
		}
	}
	if (!pass && r->cfg.action == RL_ACTION_DRY_RUN) {
		rc->would_drop++;
		pass = 1;
	}
	if (pass) {
		rc->passed++;
		rc->passed_bytes += len;
		return rl_count_pass(cnt, len);
	}
	rc->dropped++;
	rc->dropped_bytes += len;
	return rl_count_drop(cnt, len);
}

/* What the matching loop reads and finds (bpf_loop() passes it to match_one()). */
struct rl_match {
	struct rl_pkt_info pi;
	__u64 mask; /* the slots whose source prefixes hold the source */
	__u32 found; /* the first rule that matches, or RL_RULE_SLOTS */
};

/*
 * Rule @i against the packet: 1 (stop) when it matches. Run by bpf_loop(),
 * so the verifier checks it once for any rule, with nothing known of the
 * rule: unrolled over constant rules, the matches split its states past its
 * budget with a few dozen rules.
 */
static long match_one(__u64 i, void *ctx)
{
	struct rl_match *m = ctx;
	const struct rl_krule *r;
	__u64 bit;

	if (i >= RL_RULE_SLOTS)
		return 1;
	r = &rl_rules.r[i];
	bit = 1ULL << (r->slot & 63);
	if (!(m->mask & bit))
		return 0;
	if (rl_l4_match(&r->l4, &m->pi)) {
		m->found = i;
		return 1;
	}
	/* No rule left that could match: stop early. */
	m->mask &= ~bit;
	return !m->mask;
}

/*
 * The rule @m found decides the packet, unless it is a syn-cookies rule
 * (bpf/syncookie.h): a SYN it answers and a packet it drops end here; the
 * others go on to the next rule that matches (up to four syn-cookies rules
 * in a row; a fifth lets the packet reach the default rule). RL_SYN_DONE:
 * no rule decided, and the default rule's own SYN-cookie step is skipped.
 */
static __always_inline int rules_syn(struct xdp_md *ctx, struct rl_match *m, __u64 len)
{
	const struct rl_krule *r;
	struct rl_rule_counters *rc;
	int v, syn = 0;
	__u32 slot;

	for (int k = 0; k < 4; k++) {
		if (m->found >= rl_rules.n || m->found >= RL_RULE_SLOTS)
			return syn ? RL_SYN_DONE : -1;
		r = &rl_rules.r[m->found];
		if (r->action != RL_RULE_SYN)
			return rl_rule_apply(m->found, &m->pi, len);
		v = rl_syn_step(ctx, 0, r->cfg.action == RL_ACTION_DRY_RUN);
		slot = r->slot;
		rc = bpf_map_lookup_elem(&rl_rcnt, &slot);
		if (v == XDP_DROP || v == RL_SYN_WOULD_DROP) {
			if (rc) {
				rc->denied++;
				if (v == RL_SYN_WOULD_DROP) {
					rc->would_drop++;
				} else {
					rc->dropped++;
					rc->dropped_bytes += len;
				}
			}
		}
		if (v >= 0)
			return v;
		syn = 1;
		m->mask &= ~(1ULL << (slot & 63));
		m->found = RL_RULE_SLOTS;
		if (!m->mask)
			return RL_SYN_DONE;
		bpf_loop(rl_rules.n, match_one, m, 0);
	}
	return RL_SYN_DONE;
}

/*
 * The rules that can match a packet of @pi, narrowed without looking at
 * any one rule: by its protocol (proto_mask), its destination port (rl_ports,
 * read only when a candidate has --dport) and its source (rules with source
 * prefixes stay only if the longest prefix holding the source names them;
 * rl_pfx first, so that a source in no prefix's network skips the trie, and
 * neither is read for a family without prefixes).
 */
static __always_inline __u64 rules_candidates(const struct rl_pkt_info *pi)
{
	__u64 cand = (rl_rules.any_mask | rl_rules.src_mask) & rl_rules.proto_mask[pi->proto];
	struct rl_lpm_val *v = NULL;
	__u32 hi, idx;
	__u64 *w;
	int v4;

	if (rl_rules.need_ports && (cand & rl_rules.port_mask) && (pi->info & RL_PKT_L4)) {
		idx = (rl_rules.pair ? 2 * 65536 : 0) + (pi->proto == IPPROTO_UDP ? 65536 : 0) +
		      pi->dport;
		w = bpf_map_lookup_elem(&rl_ports, &idx);
		if (w)
			cand &= *w;
	}
	if (!(cand & rl_rules.src_mask))
		return cand;
	v4 = !pi->src.addr[0] && !pi->src.addr[1] && pi->src.addr[2] == bpf_htonl(0xffff);
	if (v4 ? !rl_rules.has_src4 : !rl_rules.has_src6)
		return cand & ~rl_rules.src_mask;
	hi = bpf_ntohl(v4 ? pi->src.addr[3] : pi->src.addr[0]);
	idx = rl_pfx_word(rl_rules.pair, !v4, hi);
	w = bpf_map_lookup_elem(&rl_pfx, &idx);
	if (!w || !(*w & rl_pfx_bit(hi)))
		return cand & ~rl_rules.src_mask;
	if (v4) {
		struct rl_lpm4 k4 = { .prefixlen = 32, .addr = pi->src.addr[3] };

		v = bpf_map_lookup_elem(rl_rules.pair ? (void *)&rl_src4b : (void *)&rl_src4a, &k4);
	} else {
		struct rl_lpm6 k6 = { .prefixlen = 128 };

		__builtin_memcpy(k6.addr, pi->src.addr, sizeof(k6.addr));
		v = bpf_map_lookup_elem(rl_rules.pair ? (void *)&rl_src6b : (void *)&rl_src6a, &k6);
	}
	return cand & (~rl_rules.src_mask | (v ? v->match : 0));
}

/*
 * The first rule that matches the packet decides it: its verdict, or -1 for
 * a packet no rule matched (the default rule's), or one rules do not look
 * at (not IP, ARP, neighbour discovery, malformed: as before rules);
 * RL_SYN_DONE as -1, after a syn-cookies rule let the packet go on. Out of
 * line, called from one place of the main program, and only for a packet
 * that some rule may match (rules_may_match()).
 */
static __noinline int rules_path(struct xdp_md *ctx, struct rl_kcounters *cnt)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	__u64 len = frame_len(ctx, c.pos, c.end);
	struct rl_match m = { .found = RL_RULE_SLOTS };
	struct rl_pkt_info *pi = &m.pi;
	__u32 bad = 0;
	int kind;

	if (!cnt)
		return -1;
	/* What rules see of a frame (include/rl_parse.h); the rest is the default path's. */
	kind = rl_parse_frame(&c, &pi->src, &bad, pi, RL_PARSE_PROTO, rl_rules.need_l4);
	if (kind != RL_PARSED_IPV4 && kind != RL_PARSED_IPV6)
		return -1;
	m.mask = rules_candidates(pi);
	if (!m.mask)
		return -1;
	bpf_loop(rl_rules.n, match_one, &m, 0);
	return rules_syn(ctx, &m, len);
}

/*
 * @cand narrowed by the destination port of a packet of @udp (1) or tcp
 * (0), @raw as the packet holds it (network order): rl_dport_bits is
 * indexed by that, so the common test needs no byte swap. A port that no
 * --dport rule names (its bit clear, the common case) leaves the port
 * rules out without reading rl_ports; one that some rule names is looked up
 * there, to know which.
 */
static __always_inline __u64 rules_port(__u64 cand, __u32 udp, __u16 raw)
{
	__u32 idx;
	__u64 *w;

	if (!((rl_dport_bits[udp][raw >> 6] >> (raw & 63)) & 1))
		return cand & ~rl_rules.port_mask;
	idx = (rl_rules.pair ? 2 * 65536 : 0) + (udp ? 65536 : 0) + bpf_ntohs(raw);
	w = bpf_map_lookup_elem(&rl_ports, &idx);
	return w ? cand & *w : cand;
}

/*
 * Can some rule match an untagged IP packet of protocol @proto from a
 * source whose first 32 bits are @hi (host order; of IPv6 if @v6), whose L4
 * header starts at @l4 (NULL: none, a fragment after the first)? In line
 * in the main program, on what it parsed already: rules_candidates()
 * without the trie, every table but rl_pfx (and the port tables, when a
 * candidate has --dport: rules_port()) skipped when its kind of rule is
 * absent (the flags in rl_rules are constants: the verifier drops the
 * tests that cannot pass). 0: no rule can, the default rule's packet,
 * decided without a call. Else rules_path() decides, from the whole frame.
 */
static __always_inline __u64 rules_may_match(__u8 proto, void *l4, void *end, int v6, __u32 hi)
{
	__u64 cand = (rl_rules.any_mask | rl_rules.src_mask) & rl_rules.proto_mask[proto], *w;
	__u32 idx;

	/* A port as rl_parse_frame() has one: the whole tcp or udp header there. */
	if (rl_rules.need_ports && (cand & rl_rules.port_mask) && l4) {
		if (proto == IPPROTO_TCP) {
			struct tcphdr *th = l4;

			if ((void *)(th + 1) <= end)
				cand = rules_port(cand, 0, th->dest);
		} else if (proto == IPPROTO_UDP) {
			struct udphdr *uh = l4;

			if ((void *)(uh + 1) <= end)
				cand = rules_port(cand, 1, uh->dest);
		}
	}
	if (cand & rl_rules.src_mask) {
		if (v6 ? !rl_rules.has_src6 : !rl_rules.has_src4) {
			cand &= ~rl_rules.src_mask;
		} else {
			idx = rl_pfx_word(rl_rules.pair, v6, hi);
			w = bpf_map_lookup_elem(&rl_pfx, &idx);
			if (!w || !(*w & rl_pfx_bit(hi)))
				cand &= ~rl_rules.src_mask;
		}
	}
	return cand;
}

#endif /* RL_BPF_RULES_H */
