/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing, written once and compiled unchanged into the XDP program
 * (bpf/parsing.h, the program's slow path and its rules) and into userspace
 * (simulate --pcap, user/lib/replay.c), as include/rl_algo.h is: what a
 * capture replayed by simulate calls not IP, neighbour discovery or
 * malformed, and the fields its rules see, are what the kernel's parser
 * says, by construction.
 *
 * The kernel's header structs come with it (linux/ip.h, ...), which clash with
 * glibc's netinet ones: in userspace only user/lib/replay.c includes it; the
 * outcome of a parse, enum rl_parsed, is rl_common.h's.
 *
 * One contract for every parser (xdp-tools' parsing_helpers.h): check the
 * bounds of a header against the cursor's end before any read, and either
 * advance the cursor past it or say, in *bad (enum rl_malformed), why the
 * frame is not rate limited as IP. No helper calls, no division.
 */
#ifndef RL_PARSE_H
#define RL_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include "rl_algo.h"
#include "rl_common.h"
#include "rl_rules.h"

struct hdr_cursor {
	void *pos;
	void *end;
#ifndef __bpf__
	/*
	 * Userspace: the furthest byte any bounds check asked for. A capture
	 * cut by its snap length (tcpdump -s) parses as the whole frame would
	 * when want <= the captured end: every check then had its answer from
	 * bytes that are there (user/lib/replay.c).
	 */
	void *want;
#endif
};

/*
 * Is [.., @p) past the end of the frame? The one bounds check of every
 * parser; in userspace it also records how far the parse looked.
 */
#ifdef __bpf__
#define rl_past_end(c, p) ((void *)(p) > (c)->end)
#else
RL_INLINE int rl_past_end(struct hdr_cursor *c, const void *p)
{
	if ((void *)p > c->want)
		c->want = (void *)p;
	return (void *)p > c->end;
}
#endif

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

/* rl_parse_frame()'s @what: what to read besides the source. */
#define RL_PARSE_PROTO 0x1 /* the IP protocol (rules), and the L4 fields if @need_l4 */

RL_INLINE int is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
}

/*
 * Ethernet and up to two VLAN tags (802.1Q, 802.1ad: QinQ). A third tag is
 * not something a host receives; it is counted as malformed.
 */
RL_INLINE int parse_eth(struct hdr_cursor *c, __be16 *proto, __u32 *bad)
{
	struct ethhdr *eth = c->pos;
	struct vlan_tag *tag;
	int i;

	if (rl_past_end(c, eth + 1)) {
		*bad = RL_BAD_ETH;
		return -1;
	}
	c->pos = eth + 1;
	*proto = eth->h_proto;
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < 2; i++) {
		if (!is_vlan(*proto))
			return 0;
		tag = c->pos;
		if (rl_past_end(c, tag + 1)) {
			*bad = RL_BAD_VLAN;
			return -1;
		}
		c->pos = tag + 1;
		*proto = tag->proto;
	}
	if (is_vlan(*proto)) {
		*bad = RL_BAD_VLAN;
		return -1;
	}
	return 0;
}

/*
 * The source of an IPv4 header, IPv4-mapped (see rl_key.h). Options are fine:
 * only the fixed part is read, but the header length the IHL claims must be
 * in the frame. Fragments carry the same source and are keyed the same way.
 * The cursor stays on the header.
 */
RL_INLINE int parse_ipv4(struct hdr_cursor *c, struct rl_key *key, __u32 *bad)
{
	struct iphdr *ip = c->pos;

	if (rl_past_end(c, ip + 1)) {
		*bad = RL_BAD_IPV4;
		return -1;
	}
	if (ip->version != 4 || ip->ihl < 5) {
		*bad = RL_BAD_IHL;
		return -1;
	}
	if (rl_past_end(c, c->pos + ip->ihl * 4)) {
		*bad = RL_BAD_IPV4;
		return -1;
	}
	key->addr[0] = 0;
	key->addr[1] = 0;
	key->addr[2] = bpf_htonl(0xffff);
	key->addr[3] = ip->saddr;
	return 0;
}

/*
 * The source of an IPv6 header; *nd is set for a neighbour discovery message
 * (ICMPv6 router solicitation and advertisement, neighbour solicitation and
 * advertisement, redirect: types 133 to 137), which is passed untouched like
 * ARP: limiting it would cut hosts off the link. Only an ICMPv6 header right
 * after the fixed header is looked at: ND messages carry no extension headers
 * in practice, and walking them is not worth its cost on every packet. Hop
 * limit 255 as RFC 4861 requires (receivers drop anything else): a packet from
 * off the link arrives with less, so the exemption cannot be used from afar.
 * An ICMPv6 header cut short is an ordinary IPv6 packet, rate limited. The
 * cursor stays on the header.
 */
RL_INLINE int parse_ipv6(struct hdr_cursor *c, struct rl_key *key, __u32 *bad, int *nd)
{
	struct ipv6hdr *ip6 = c->pos;
	__u8 *type;

	if (rl_past_end(c, ip6 + 1) || ip6->version != 6) {
		*bad = RL_BAD_IPV6;
		return -1;
	}
	__builtin_memcpy(key->addr, &ip6->saddr, sizeof(key->addr));
	*nd = 0;
	if (ip6->nexthdr != 58 /* IPPROTO_ICMPV6 */ || ip6->hop_limit != 255)
		return 0;
	type = (void *)(ip6 + 1);
	if (rl_past_end(c, type + 1))
		return 0;
	*nd = *type >= 133 && *type <= 137;
	return 0;
}

/*
 * The L4 fields rules see (struct rl_pkt_info), the cursor on the L4 header
 * and pi->proto set: with @need_l4 (some rule matches on them) and @first (not
 * an IPv4 fragment after the first), the destination port of tcp and udp and
 * the flags of tcp, when their fixed header is in the frame. No L4
 * (RL_PKT_L4 clear) otherwise; an IPv6 packet with extension headers has
 * their first number as proto, so it is never tcp or udp here (no extension
 * header is walked).
 */
RL_INLINE void rl_parse_l4(struct hdr_cursor *c, struct rl_pkt_info *pi, int first, int need_l4)
{
	pi->info = RL_PKT_PROTO;
	if (!need_l4 || !first)
		return;
	if (pi->proto == 6 /* IPPROTO_TCP */) {
		struct tcphdr *th = c->pos;

		if (rl_past_end(c, th + 1))
			return;
		pi->dport = bpf_ntohs(th->dest);
		pi->tcp_flags = ((__u8 *)th)[13];
		pi->info |= RL_PKT_L4;
	} else if (pi->proto == 17 /* IPPROTO_UDP */) {
		struct udphdr *uh = c->pos;

		if (rl_past_end(c, uh + 1))
			return;
		pi->dport = bpf_ntohs(uh->dest);
		pi->info |= RL_PKT_L4;
	}
}

/*
 * A whole frame, as the XDP program reads it: Ethernet and its tags, then
 * IPv4, or IPv6 and neighbour discovery; anything else is not IP. Returns an
 * enum rl_parsed; *bad says why a frame is RL_PARSED_MALFORMED. The source
 * goes to *src (unmasked, IPv4 as ::ffff:a.b.c.d). With RL_PARSE_PROTO in
 * @what (a constant: the code it guards goes when it is 0), pi->proto and,
 * with @need_l4, the L4 fields are read too, for rules (@src is then
 * &pi->src). What a frame is, and so what every later step does with it,
 * comes from here on both sides.
 */
RL_INLINE int rl_parse_frame(struct hdr_cursor *c, struct rl_key *src, __u32 *bad,
			     struct rl_pkt_info *pi, int what, int need_l4)
{
	__be16 proto;
	int nd;

	if (parse_eth(c, &proto, bad))
		return RL_PARSED_MALFORMED;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = c->pos;

		if (parse_ipv4(c, src, bad))
			return RL_PARSED_MALFORMED;
		if (what & RL_PARSE_PROTO) {
			pi->proto = ip->protocol;
			c->pos += ip->ihl * 4;
			rl_parse_l4(c, pi, !(ip->frag_off & bpf_htons(0x1fff)), need_l4);
		}
		return RL_PARSED_IPV4;
	}
	if (proto != bpf_htons(ETH_P_IPV6))
		return RL_PARSED_NOT_IP;
	if (parse_ipv6(c, src, bad, &nd))
		return RL_PARSED_MALFORMED;
	if (nd)
		return RL_PARSED_ND;
	if (what & RL_PARSE_PROTO) {
		struct ipv6hdr *ip6 = c->pos;

		pi->proto = ip6->nexthdr;
		c->pos = ip6 + 1;
		rl_parse_l4(c, pi, 1, need_l4);
	}
	return RL_PARSED_IPV6;
}

#endif /* RL_PARSE_H */
