// SPDX-License-Identifier: GPL-2.0-only
/*
 * xdp-ratelimit: the XDP program. Parses the frame, keys the source by its
 * masked address, runs the rate algorithm of include/rl_algo.h against the
 * source's state word (compare-and-swap, so that one source's packets on many
 * CPUs are counted exactly) and counts the verdict.
 *
 * The program is built for one configuration: rl_cfg is fixed before load,
 * in a read-only section the verifier reads as constants, so it removes
 * every branch the configuration does not take (other algorithms, byte or
 * packet costs, the clock, dry-run...). set loads a new program and swaps it
 * in (user/lib/prog.c). Untagged IPv4 and IPv6 are straight-line code;
 * everything else (VLAN tags, ICMPv6 and IPv4-mapped sources, frames to pass
 * untouched, malformed ones) goes through slow_path(), out of line.
 *
 * This file keeps the packet flow and the programs: the entry points (the
 * XDP program, with rules, SYN cookies and levels or without, and the three
 * syscall programs userspace runs), slow_path(), the
 * choice of the IPv4 table (limit_v4()), the IPv6 one's rounds (limit_v6())
 * and the verdict (decide()). Each
 * concern is a header of its own, included here and nowhere below:
 *	maps.h		every map, the configuration and the other globals
 *	clock.h		the clocks, a packet's cost, the window tick
 *	sync.h		fleet sync counting of passed packets, the keyed drain
 *	state.h		the answers of the tables, the step of a state word
 *	carry.h		a new source's state, from the previous generation
 *	sa_set.h	the set-associative protocol's steps on one set
 *	table4_lru.h	IPv4 in rl_state4 (LRU hash)
 *	table4_sa.h	IPv4 in rl_sets4 (set-associative, the default)
 *	table4_wide.h	IPv4 in rl_wide4 (set-associative, whole states)
 *	table6_sa.h	IPv6 in rl_sets6 (set-associative, keys whole)
 *	sweep.h		the sweep of rl_sets4 (a BPF timer)
 *	sample.h	drop samples to the events ring
 *	level.h		the states of the levels above the source (rl_agg.h)
 *	admission.h	the admission cap, on a miss of the source tables
 *	aggregate.h	prefix aggregates and the interface's limit
 *	hot.h		the limited sources, for top
 *	syncookie.h	SYN cookies (--syn-cookies, syn-cookies rules)
 *	rules.h		the rules, before the default rule
 *	charge.h	fleet sync's charge of remote units
 *	parsing.h	header parsing; verdict.h: the verdict's counting
 */
#include "parsing.h"
#include "verdict.h"
#include "maps.h"
#include "clock.h"
#include "sync.h"
#include "state.h"
#include "carry.h"
#include "table4_lru.h"
#include "table4_sa.h"
#include "table4_wide.h"
#include "table6_sa.h"
#include "sweep.h"
#include "sample.h"
#include "level.h"
#include "admission.h"
#include "aggregate.h"
#include "hot.h"
#include "syncookie.h"
#include "rules.h"
#include "charge.h"

/*
 * The IPv4 table of the program: the policy's (a constant) in the full one,
 * rl_sets4 in xdp_ratelimit_b, which userspace loads only for that table
 * (rl_prog_open()): its object holds no code of the others.
 */
static __always_inline int table4_of(const int full)
{
	return full ? rl_cfg.table4 : RL_TABLE4_SA;
}

/* The three steps of the set table in use, rl_sets4 or rl_wide4: each is one call. */
static __always_inline int sets_hit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost,
				     const int full)
{
	if (table4_of(full) == RL_TABLE4_WIDE)
		return wide_hit4(cnt, addr, now, cost);
	return sa_hit4(cnt, addr, now, cost);
}

static __always_inline int sets_limit4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost,
				       int lost, const int full)
{
	if (table4_of(full) == RL_TABLE4_WIDE)
		return limit_wide4(cnt, addr, now, cost, lost);
	return limit_sa4(cnt, addr, now, cost, lost);
}

static __always_inline int sets_miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost,
				      const int full)
{
	if (table4_of(full) == RL_TABLE4_WIDE)
		return wide_miss4(cnt, addr, now, cost);
	return sa_miss4(cnt, addr, now, cost);
}

/*
 * A new IPv4 source in the set table: insert it (sa_miss4(), wide_miss4()),
 * starting over with the lookup when another CPU changed the set first; at
 * most RL_CAS_TRIES insertions, then RL_CAS_LOST.
 */
static __always_inline int miss4_in(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost,
				    const int full)
{
	int ret = RL_NOT_HELD;

	if (!cnt)
		return RL_CAS_LOST;
	for (int t = 0; ret == RL_NOT_HELD && t < RL_CAS_TRIES; t++) {
		ret = sets_miss4(cnt, addr, now, cost, full);
		if (ret == RL_RETRY_LOOKUP) {
			cnt->cas_retries++;
			ret = sets_limit4(cnt, addr, now, cost, 0, full);
		}
	}
	if (ret == RL_NOT_HELD || ret == RL_RETRY_LOOKUP) {
		cnt->cas_exhausted++;
		return RL_CAS_LOST;
	}
	return ret;
}

/*
 * miss4_in() for each program: global functions, which the verifier checks
 * once, not once in the main program and again for each way slow_path()
 * reaches them.
 */
__noinline int miss4(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	return miss4_in(cnt, addr, now, cost, 1);
}

__noinline int miss4_b(struct rl_kcounters *cnt, __be32 addr, __u64 now, __u64 cost)
{
	return miss4_in(cnt, addr, now, cost, 0);
}

/*
 * IPv4 source @saddr. A hit's first round is in line when @fast (the main
 * program; slow_path()'s frame has no room for it): sa_hit4(), wide_hit4()
 * or lru_hit4(). Otherwise in a set table a hit is one call of limit_sa4()
 * (limit_wide4() in rl_wide4); a miss is one call of miss4(), not made from
 * the lookup: three frames deep under slow_path() would pass the 512 bytes
 * of stack the verifier allows.
 */
static __always_inline int limit_v4_in(struct rl_kcounters *cnt, __be32 addr, __u64 len, int fast,
				       __u64 now, const int full)
{
	__u64 cost = packet_cost(len);
	int ret;

	if (table4_of(full) == RL_TABLE4_LRU) {
		if (!fast)
			return limit_lru4(cnt, addr, now, cost, 0);
		ret = lru_hit4(cnt, addr, now, cost);
		if (ret == RL_NOT_HELD || ret == RL_ROUND_LOST)
			return limit_lru4(cnt, addr, now, cost, ret);
		return ret;
	}
	if (!fast)
		ret = sets_limit4(cnt, addr, now, cost, 0, full);
	else if ((ret = sets_hit4(cnt, addr, now, cost, full)) == RL_ROUND_LOST)
		ret = sets_limit4(cnt, addr, now, cost, 1, full);
	/* A new source, beyond the admission cap: limited with the others as one. */
	if (ret == RL_NOT_HELD && full && admit_on(RL_LVL_ON4)) {
		ret = admit4(cnt, addr, now, cost);
		if (ret != RL_NOT_HELD)
			return ret;
	}
	if (ret == RL_NOT_HELD)
		ret = full ? miss4(cnt, addr, now, cost) : miss4_b(cnt, addr, now, cost);
	return ret;
}

/*
 * limit_v4_in() on the masked source at time @now (the levels' time, when
 * some are on); one over its limit is noted for top.
 */
static __always_inline int limit_v4(struct rl_kcounters *cnt, __be32 saddr, __u64 len, int fast,
				    __u64 now, const int full)
{
	__be32 addr = saddr & rl_cfg.mask4;
	int ret = limit_v4_in(cnt, addr, len, fast, now, full);

	if (!ret)
		hot_note(0, 0, bpf_htonl(0xffff), addr, 0, rl_cfg.gen);
	return ret;
}

/*
 * IPv6 source @a0..@a3 (unmasked) over its limit, noted for top under its
 * key in rl_sets6: masked by --prefix6, or whole if @ll (link-local).
 */
static __always_inline void hot_v6(__u32 a0, __u32 a1, __u32 a2, __u32 a3, int ll)
{
	if (!ll) {
		a0 &= rl_cfg.mask6[0];
		a1 &= rl_cfg.mask6[1];
		a2 &= rl_cfg.mask6[2];
		a3 &= rl_cfg.mask6[3];
	}
	hot_note(a0, a1, a2, a3, 0, rl_cfg.gen);
}

/* A new IPv6 source in rl_sets6 (sa6_miss()), as miss4_in(). */
__noinline int miss6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 now, __u64 cost)
{
	int ret = RL_NOT_HELD;

	if (!cnt || !src)
		return RL_CAS_LOST;
	for (int t = 0; ret == RL_NOT_HELD && t < RL_CAS_TRIES; t++) {
		ret = sa6_miss(cnt, src, now, cost);
		if (ret == RL_RETRY_LOOKUP) {
			cnt->cas_retries++;
			ret = limit_sa6(cnt, src, now, cost, 0);
		}
	}
	if (ret == RL_NOT_HELD || ret == RL_RETRY_LOOKUP) {
		cnt->cas_exhausted++;
		return RL_CAS_LOST;
	}
	return ret;
}

/*
 * IPv6 source @src (unmasked), as limit_v4(), after the hit's first round
 * in line answered @ret (sa6_hit(): 1 or 0, decided; RL_NOT_HELD or
 * RL_ROUND_LOST), or with @ret -1 (slow_path(): no round yet): limit_sa6()
 * for the rest; a miss asks the admission cap (admit6(), when it is on),
 * then calls miss6().
 */
static __always_inline int limit_v6(struct rl_kcounters *cnt, const struct rl_key *src, __u64 now,
				    __u64 cost, int ret, const int full)
{
	if (ret < 0)
		ret = limit_sa6(cnt, src, now, cost, 0);
	else if (ret == RL_ROUND_LOST)
		ret = limit_sa6(cnt, src, now, cost, 1);
	/* A new source, beyond the admission cap: limited with the others as one. */
	if (ret == RL_NOT_HELD && full && admit_on(RL_LVL_ON6)) {
		ret = admit6(cnt, src, now, cost);
		if (ret != RL_NOT_HELD)
			return ret;
	}
	if (ret == RL_NOT_HELD)
		ret = miss6(cnt, src, now, cost);
	if (!ret) /* over its limit: noted for top, keyed as rl_sets6 keys it */
		hot_v6(src->addr[0], src->addr[1], src->addr[2], src->addr[3],
		       link_local6(src->addr[0]));
	return count6(ret, cnt, src, cost);
}

/* *@src, of the address words @a0..@a3 (network order). */
static __always_inline void src6(struct rl_key *src, __u32 a0, __u32 a1, __u32 a2, __u32 a3)
{
	src->addr[0] = a0;
	src->addr[1] = a1;
	src->addr[2] = a2;
	src->addr[3] = a3;
}

/*
 * IPv6 source @a0..@a3 (unmasked, neither IPv4-mapped nor link-local) at
 * time @now: the hit's first round in line (sa6_hit()), limit_v6() for the
 * rest, with the source written to @src (the caller's: one slot of the
 * main program's stack, whether or not levels come first).
 */
static __always_inline int hit_v6(struct rl_kcounters *cnt, struct rl_key *src, __u32 a0, __u32 a1,
				  __u32 a2, __u32 a3, __u64 now, __u64 cost, const int full)
{
	int ret;

	ret = sa6_hit(cnt, a0, a1, a2, a3, now, cost);
	if (ret != RL_NOT_HELD && ret != RL_ROUND_LOST && !rl_cfg.sync_count) {
		if (!ret)
			hot_v6(a0, a1, a2, a3, 0);
		return ret;
	}
	src6(src, a0, a1, a2, a3);
	return limit_v6(cnt, src, now, cost, ret, full);
}

/*
 * Untagged IPv6 from @ip6 (a whole fixed header, not ICMPv6), source @a0..@a3
 * neither IPv4-mapped nor link-local: hit_v6(), behind the levels above the
 * source when some are on for IPv6 (limit6()).
 */
static __always_inline int fast_v6(struct rl_kcounters *cnt, __u32 a0, __u32 a1, __u32 a2, __u32 a3,
				   __u64 len, const int full)
{
	struct rl_key src;

	cnt->ipv6++;
	if (full && levels_on(RL_LVL_ON6)) {
		src6(&src, a0, a1, a2, a3);
		return limit6(cnt, &src, len, 1, full);
	}
	return hit_v6(cnt, &src, a0, a1, a2, a3, rl_now(), packet_cost(len), full);
}

/* The verdict for a table's answer @ret (limit_v4(), limit_v6()), counted (and sampled when dropped). */
static __always_inline int decide(struct xdp_md *ctx, struct rl_kcounters *cnt, int ret, __u64 len)
{
	if (ret > 0)
		return rl_count_pass(cnt, len);
	if (ret <= RL_V_LEVEL)
		return decide_level(ctx, cnt, ret, len);
	if (ret == 0 || ret == RL_CAS_LOST) {
		if (rl_cfg.action == RL_ACTION_DRY_RUN) {
			cnt->would_drop++;
			cnt->would_drop_bytes += len;
			sample(ctx, RL_EV_WOULD_DROP);
			return rl_count_pass(cnt, len);
		}
		cnt->limited++;
		sample(ctx, ret ? RL_EV_CAS_EXHAUSTED : RL_EV_LIMITED);
		return rl_count_drop(cnt, len);
	}
	if (rl_cfg.fail_policy == RL_FAIL_DROP) {
		sample(ctx, RL_EV_INSERT_FAIL);
		return rl_count_drop(cnt, len);
	}
	return rl_count_pass(cnt, len);
}

/*
 * Everything but untagged IPv4 and IPv6: VLAN tags, ICMPv6 (neighbour
 * discovery passes) and IPv4-mapped sources, what passes untouched,
 * malformed frames.
 */
static __always_inline int slow_path_in(struct xdp_md *ctx, struct rl_kcounters *cnt,
					const int full)
{
	struct hdr_cursor c = { .pos = (void *)(long)ctx->data,
				.end = (void *)(long)ctx->data_end };
	__u64 len = frame_len(ctx, c.pos, c.end);
	struct rl_key src;
	__u32 bad = 0;
	int kind;

	if (!cnt)
		return XDP_PASS;
	/* The parser userspace replays captures with (include/rl_parse.h). */
	kind = rl_parse_frame(&c, &src, &bad, NULL, 0, 0);
	if (kind == RL_PARSED_MALFORMED)
		goto malformed;
	if (kind == RL_PARSED_NOT_IP) {
		cnt->not_ip++;
		return rl_count_pass(cnt, len);
	}
	if (kind == RL_PARSED_ND) {
		cnt->nd++;
		return rl_count_pass(cnt, len);
	}
	/*
	 * IPv4, or IPv6: an IPv4-mapped source (::ffff:a.b.c.d) is that IPv4
	 * host, a link-local one is keyed whole: see rl_key.h.
	 */
	if (kind == RL_PARSED_IPV6) {
		cnt->ipv6++;
		if (src.addr[0] || src.addr[1] || src.addr[2] != bpf_htonl(0xffff))
			return decide(ctx, cnt, limit6(cnt, &src, len, 0, full), len);
	}
	return decide(ctx, cnt, limit4(cnt, src.addr[3], len, 0, full), len);
malformed:
	if (bad < RL_BAD__COUNT)
		cnt->malformed[bad]++;
	if (rl_cfg.malformed_drop) {
		sample(ctx, RL_EV_MALFORMED + bad);
		return rl_count_drop(cnt, len);
	}
	return rl_count_pass(cnt, len);
}

/*
 * slow_path_in() out of line, for the program with levels and for the one
 * without: global functions, checked once by the verifier rather than once
 * for each state the main program reaches the call in (four).
 */
__noinline int slow_path(struct xdp_md *ctx, struct rl_kcounters *cnt)
{
	if (!cnt)
		return XDP_PASS;
	return slow_path_in(ctx, cnt, 1);
}

__noinline int slow_path_basic(struct xdp_md *ctx, struct rl_kcounters *cnt)
{
	if (!cnt)
		return XDP_PASS;
	return slow_path_in(ctx, cnt, 0);
}

/* rules_first()'s answers. */
enum {
	RL_FIRST_NONE = 0, /* no rule can match: the default rule's packet */
	RL_FIRST_NONE4 = 1, /* the same, of untagged IPv4 with a whole header */
	RL_FIRST_MAY = 2, /* rules_path() decides */
	RL_FIRST_NONE6 = 3, /* RL_FIRST_NONE, of untagged IPv6 (not ICMPv6, not IPv4-mapped) */
};

/*
 * With rules: can one match the frame at @data (to @end)? For untagged IPv4
 * and IPv6 (but ICMPv6: neighbour discovery is rules_path()'s to tell),
 * rules_may_match() answers in line on the headers, with no call and no
 * lookup of a trie; any other frame is rules_path()'s to parse. An
 * IPv4-mapped source is the IPv4 host to rules too. Checks an IPv4 or IPv6
 * header as the main program's straight lines do, which RL_FIRST_NONE4 and
 * RL_FIRST_NONE6 let skip their own checks.
 */
static __always_inline int rules_first(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	__u32 a0, a3;
	int mapped;

	if ((void *)(ip + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IP) && ip->version == 4 &&
	    ip->ihl >= 5 && (void *)ip + ip->ihl * 4 <= end)
		return rules_may_match(ip->protocol,
				       ip->frag_off & bpf_htons(0x1fff) ? NULL :
									  (void *)ip + ip->ihl * 4,
				       end, 0, bpf_ntohl(ip->saddr)) ?
			       RL_FIRST_MAY :
			       RL_FIRST_NONE4;
	if ((void *)(ip6 + 1) > end || eth->h_proto != bpf_htons(ETH_P_IPV6) || ip6->version != 6 ||
	    ip6->nexthdr == 58 /* IPPROTO_ICMPV6 */)
		return RL_FIRST_MAY;
	a0 = ip6->saddr.in6_u.u6_addr32[0];
	a3 = ip6->saddr.in6_u.u6_addr32[3];
	mapped = !a0 && !ip6->saddr.in6_u.u6_addr32[1] &&
		 ip6->saddr.in6_u.u6_addr32[2] == bpf_htonl(0xffff);
	if (rules_may_match(ip6->nexthdr, ip6 + 1, end, !mapped, bpf_ntohl(mapped ? a3 : a0)))
		return RL_FIRST_MAY;
	return mapped ? RL_FIRST_NONE : RL_FIRST_NONE6;
}

/*
 * The frame's bounds, read again after a call that may have changed the
 * packet (a syn-cookies rule's or the SYN-cookie step's SYN-ACK): to the
 * verifier, every packet pointer from before the call is gone.
 */
static __always_inline void *reread(struct xdp_md *ctx, void **end)
{
	*end = (void *)(long)ctx->data_end;
	return (void *)(long)ctx->data;
}

static __always_inline int rl_xdp(struct xdp_md *ctx, const int full)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	int v = -1, syn = RL_SYN_FIRST_NONE;
	struct rl_kcounters *cnt;
	__u32 zero = 0;
	__u64 len;

	cnt = bpf_map_lookup_elem(&rl_counters, &zero);
	if (!cnt)
		return XDP_PASS; /* cannot happen: a one-slot per-CPU array */
	/* Rules first, when one may match; -1: the default rule's packet. */
	if (full && rl_rules.n) {
		int first = rules_first(data, end);

		/*
		 * IPv4 or IPv6 no rule can match, and no SYN-cookie step to
		 * come: the straight line below, on the header rules_first()
		 * checked and nothing has changed (no call ran), rather than
		 * parsed again.
		 */
		if (first == RL_FIRST_NONE4 && !rl_cfg.syn.n)
			goto v4;
		if (first == RL_FIRST_NONE6 && !rl_cfg.syn.n)
			goto v6;
		if (first == RL_FIRST_MAY) {
			v = rules_path(ctx, cnt);
			if (v >= 0)
				return v;
			data = reread(ctx, &end);
		}
	}
	/*
	 * --syn-cookies: before the per-source step, so a SYN leaves no state
	 * (bpf/syncookie.h); no call for a frame the step would not touch (UDP,
	 * TCP to another port), and a header syn_first() checked is not
	 * checked again.
	 */
	if (full && rl_cfg.syn.n && v != RL_SYN_DONE) {
		syn = syn_first(data, end);
		if (syn == RL_SYN_FIRST_STEP) {
			v = rl_syn_step(ctx, 1, rl_cfg.action == RL_ACTION_DRY_RUN);
			if (v >= 0)
				return v;
			data = reread(ctx, &end);
		}
	}
	eth = data;
	ip = (void *)(eth + 1);
	ip6 = (void *)(eth + 1);
	if (syn == RL_SYN_FIRST_NONE4)
		goto v4;
	if (syn == RL_SYN_FIRST_NONE6)
		goto v6;
	/* Untagged IPv4 with a whole header (options included): the straight line. */
	if ((void *)(ip + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IP) && ip->version == 4 &&
	    ip->ihl >= 5 && (void *)ip + ip->ihl * 4 <= end) {
v4:
		len = frame_len(ctx, data, end);
		return decide(ctx, cnt, limit4(cnt, ip->saddr, len, 1, full), len);
	}
	/*
	 * Untagged IPv6, but ICMPv6 (neighbour discovery), IPv4-mapped sources
	 * (IPv4 ones) and link-local ones (keyed whole): the other straight
	 * line, the levels above the source included.
	 */
	if ((void *)(ip6 + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IPV6) &&
	    ip6->version == 6 && ip6->nexthdr != 58 /* IPPROTO_ICMPV6 */) {
		__u32 a0, a1, a2, a3;
v6:
		a0 = ip6->saddr.in6_u.u6_addr32[0];
		a1 = ip6->saddr.in6_u.u6_addr32[1];
		a2 = ip6->saddr.in6_u.u6_addr32[2];
		a3 = ip6->saddr.in6_u.u6_addr32[3];
		if ((a0 || a1 || a2 != bpf_htonl(0xffff)) && !link_local6(a0)) {
			len = frame_len(ctx, data, end);
			return decide(ctx, cnt, fast_v6(cnt, a0, a1, a2, a3, len, full), len);
		}
	}
	return full ? slow_path(ctx, cnt) : slow_path_basic(ctx, cnt);
}

/*
 * The XDP program, two of it: userspace loads one (rl_prog_open()). With
 * rules, SYN cookies, a level above the source or IPv4 in a table other than
 * rl_sets4, xdp_ratelimit; without (the default), xdp_ratelimit_b, whose
 * object holds none of their code: the
 * verifier would remove it as dead, but only after the load, and that
 * removal's time grows with the square of the program (rules, SYN cookies
 * and levels were 40% of the program loaded, and about 12 ms of an attach).
 */
SEC("xdp")
int xdp_ratelimit(struct xdp_md *ctx)
{
	return rl_xdp(ctx, 1);
}

SEC("xdp")
int xdp_ratelimit_b(struct xdp_md *ctx)
{
	return rl_xdp(ctx, 0);
}

/*
 * Arm the sweep's timer (bpf/sweep.h), or take it over from an earlier load:
 * userspace runs this after each load (rl_prog_open()). The timer holds this
 * program, not the XDP one: once no interface runs the limiter any more, no
 * XDP program uses its maps, and its pins are found orphaned (cleanup, a new
 * attach); removing them frees the timer, this program and the maps.
 */
SEC("syscall")
int rl_sweep_arm(void *ctx)
{
	struct rl_sweep *sw;
	__u32 zero = 0;

	sw = bpf_map_lookup_elem(&rl_sweep, &zero);
	if (!sw)
		return -2; /* ENOENT */
	/* -EBUSY once armed by an earlier load: the callback is taken over below. */
	bpf_timer_init(&sw->t, &rl_sweep, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&sw->t, sweep_cb);
	sw->armed = 1;
	return bpf_timer_start(&sw->t, RL_SA_SWEEP_TICK_NS, 0);
}

/* Fleet sync's charge (bpf/charge.h) of the n entries of rl_chg the agent filled. */
SEC("syscall")
int rl_charge_prog(struct rl_sync_args *args)
{
	struct charge_loop lc = {};
	__u32 n = args->n;

	if (n > RL_SYNC_BATCH)
		return -22; /* EINVAL */
	lc.now = rl_now();
	bpf_loop(n, charge_one, &lc, 0);
	args->charged = lc.charged;
	args->lost = lc.lost;
	return 0;
}

/*
 * Fleet sync's drain of a keyed counter table (bpf/sync.h): every counter
 * that holds units, exchanged with 0, into rl_chg (at most RL_SYNC_BATCH;
 * args->more: run again for the rest). The agent drains rl_sync_slots itself.
 */
SEC("syscall")
int rl_drain_prog(struct rl_sync_drain_args *args)
{
	struct drain_ctx d = {};

	if (args->table == RL_SYNC_T4)
		bpf_for_each_map_elem(&rl_sync4, drain4, &d, 0);
	else if (args->table == RL_SYNC_T6)
		bpf_for_each_map_elem(&rl_sync6, drain6, &d, 0);
	else if (args->table == RL_SYNC_TR)
		bpf_for_each_map_elem(&rl_syncr, drainr, &d, 0);
	else
		return -22; /* EINVAL */
	args->n = d.n;
	args->more = d.more;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
