/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsing for the XDP program. One contract for every parser: check
 * the bounds of the header before any read, advance the cursor past it and
 * return what comes next, or a negative enum rl_malformed-based code.
 *
 * Includes include/ headers and libbpf's only (the bench's programs use it too).
 */
#ifndef RL_PARSING_H
#define RL_PARSING_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_common.h"

struct hdr_cursor {
	void *pos;
	void *end;
};

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

/* The outcome of parsing a frame. */
enum rl_parsed {
	RL_PARSED_IPV4,
	RL_PARSED_IPV6,
	RL_PARSED_NOT_IP,
	RL_PARSED_MALFORMED,
};

static __always_inline int is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
}

/*
 * Ethernet and up to two VLAN tags (802.1Q, 802.1ad: QinQ). A third tag is
 * not something a host receives; it is counted as malformed.
 */
static __always_inline int parse_eth(struct hdr_cursor *c, __be16 *proto, __u32 *bad)
{
	struct ethhdr *eth = c->pos;
	struct vlan_tag *tag;
	int i;

	if ((void *)(eth + 1) > c->end) {
		*bad = RL_BAD_ETH;
		return -1;
	}
	c->pos = eth + 1;
	*proto = eth->h_proto;
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (!is_vlan(*proto))
			return 0;
		tag = c->pos;
		if ((void *)(tag + 1) > c->end) {
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
 */
static __always_inline int parse_ipv4(struct hdr_cursor *c, struct rl_key *key, __u32 *bad)
{
	struct iphdr *ip = c->pos;

	if ((void *)(ip + 1) > c->end) {
		*bad = RL_BAD_IPV4;
		return -1;
	}
	if (ip->version != 4 || ip->ihl < 5) {
		*bad = RL_BAD_IHL;
		return -1;
	}
	if (c->pos + ip->ihl * 4 > c->end) {
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
 * An ICMPv6 header cut short is an ordinary IPv6 packet, rate limited.
 */
static __always_inline int parse_ipv6(struct hdr_cursor *c, struct rl_key *key, __u32 *bad, int *nd)
{
	struct ipv6hdr *ip6 = c->pos;
	__u8 *type;

	if ((void *)(ip6 + 1) > c->end || ip6->version != 6) {
		*bad = RL_BAD_IPV6;
		return -1;
	}
	__builtin_memcpy(key->addr, &ip6->saddr, sizeof(key->addr));
	*nd = 0;
	if (ip6->nexthdr != 58 /* IPPROTO_ICMPV6 */ || ip6->hop_limit != 255)
		return 0;
	type = (void *)(ip6 + 1);
	if ((void *)(type + 1) > c->end)
		return 0;
	*nd = *type >= 133 && *type <= 137;
	return 0;
}

#endif /* RL_PARSING_H */
