/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small Ethernet frame builder for the BPF_PROG_TEST_RUN tests. Each
 * fr_*() call appends one header; the EtherType argument names what comes
 * next, so a VLAN stack reads in wire order:
 *
 *	fr_eth(f, ETH_P_8021AD);
 *	fr_vlan(f, 100, ETH_P_8021Q);
 *	fr_vlan(f, 200, ETH_P_IP);
 *	fr_ipv4(f, "198.18.0.1", NULL);
 *	fr_pad(f, 60);
 *
 * A builder that runs out of room, or is given an address it cannot parse,
 * sets f->bad instead of writing; the test checks it once at the end.
 */
#ifndef RL_FRAMES_H
#define RL_FRAMES_H

#include <stdbool.h>
#include <linux/types.h>

/* A full-size frame with two VLAN tags (no FCS: XDP never sees it). */
#define FRAME_MAX 1522
/* The shortest frame on the wire, without its FCS: what a NIC pads to. */
#define FRAME_MIN 60

struct frame {
	__u8 data[FRAME_MAX];
	unsigned int len;
	unsigned int l3; /* offset of the IP header, 0: none */
	int family; /* AF_INET, AF_INET6, 0 */
	bool bad;
};

/* Optional IPv4 header fields; NULL or zero for a plain 20-byte header. */
struct fr_ip4 {
	unsigned int ihl; /* header length in 32-bit words, 0: 5 */
	bool set_ihl; /* write ihl as given even if < 5 */
	unsigned int version; /* 0: 4 */
	__u16 frag; /* flags and fragment offset, host order */
};

void fr_init(struct frame *f);
/* Destination 02:00:00:00:00:02, source 02:00:00:00:00:01. */
void fr_eth(struct frame *f, __u16 proto);
void fr_vlan(struct frame *f, __u16 vid, __u16 proto);
/*
 * An IPv4 header from @src with options (NOPs, then EOL) filling IHL > 5,
 * then an 8-byte UDP header unless this is a non-first fragment.
 */
void fr_ipv4(struct frame *f, const char *src, const struct fr_ip4 *o);
/* An IPv6 header from @src (version field @version, 0: 6) and a UDP header. */
void fr_ipv6(struct frame *f, const char *src, unsigned int version);
/*
 * An IPv6 header from @src with hop limit @hops and an ICMPv6 message of
 * type @type: the 4-byte ICMPv6 header, 4 reserved bytes and a 16-byte
 * target address (the shape of a neighbour solicitation), 24 bytes in all.
 */
void fr_icmp6(struct frame *f, const char *src, __u8 type, __u8 hops);
/*
 * Headers for rules: an L4 header of protocol @proto after the IP header
 * (tcp: 20 bytes with destination port @dport and flags @flags; udp: 8 with
 * @dport; icmp, icmpv6: 8; anything else: none). IPv4 with flags and
 * fragment offset @frag: a fragment after the first has no L4 header. IPv6
 * with @ext: an 8-byte hop-by-hop options header first (next header 0).
 */
void fr_ipv4_l4(struct frame *f, const char *src, __u8 proto, __u16 dport, __u8 flags, __u16 frag);
void fr_ipv6_l4(struct frame *f, const char *src, __u8 proto, __u16 dport, __u8 flags, bool ext);
/* An ARP request, 198.18.0.1 asking for 198.18.0.2. */
void fr_arp(struct frame *f);
/* An LLDPDU: chassis ID, port ID, TTL, end. */
void fr_lldp(struct frame *f);
/*
 * Zero-pad to @len bytes (UDP payload, for an IP frame: the IP lengths and
 * the IPv4 checksum are brought up to date). Never shortens.
 */
void fr_pad(struct frame *f, unsigned int len);
/* Cut to the first @len bytes: a truncated frame, lengths left as they were. */
void fr_cut(struct frame *f, unsigned int len);

#endif /* RL_FRAMES_H */
