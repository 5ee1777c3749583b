// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The frame builder of frames.h. Headers are written byte by byte in network
 * order, so the frames do not depend on the host's struct layouts.
 */
#include <arpa/inet.h>
#include <string.h>
#include <linux/if_ether.h>
#include "frames.h"

#define IPV4_HLEN  20
#define IPV6_HLEN  40
#define UDP_HLEN   8
#define ICMP6_LEN  24
#define IP_OFFMASK 0x1fff

static __u8 *room(struct frame *f, unsigned int n)
{
	__u8 *p;

	if (f->bad || f->len + n > FRAME_MAX) {
		f->bad = true;
		return NULL;
	}
	p = f->data + f->len;
	memset(p, 0, n);
	f->len += n;
	return p;
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

void fr_init(struct frame *f)
{
	memset(f, 0, sizeof(*f));
}

void fr_eth(struct frame *f, __u16 proto)
{
	static const __u8 dst[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const __u8 src[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };
	__u8 *p = room(f, ETH_HLEN);

	if (!p)
		return;
	memcpy(p, dst, ETH_ALEN);
	memcpy(p + ETH_ALEN, src, ETH_ALEN);
	put16(p + 2 * ETH_ALEN, proto);
}

void fr_vlan(struct frame *f, __u16 vid, __u16 proto)
{
	__u8 *p = room(f, 4);

	if (!p)
		return;
	put16(p, vid & 0xfff);
	put16(p + 2, proto);
}

static void udp(struct frame *f)
{
	__u8 *p = room(f, UDP_HLEN);

	if (!p)
		return;
	put16(p, 40000);
	put16(p + 2, 53);
	put16(p + 4, UDP_HLEN);
}

void fr_ipv4(struct frame *f, const char *src, const struct fr_ip4 *o)
{
	static const struct fr_ip4 plain = { 0 };
	unsigned int ihl, hlen;
	struct in_addr s, d;
	__u8 *p;

	if (!o)
		o = &plain;
	ihl = o->ihl || o->set_ihl ? o->ihl : 5;
	/* An IHL below 5 still comes with the fixed part of a header. */
	hlen = ihl < 5 ? IPV4_HLEN : ihl * 4;
	if (inet_pton(AF_INET, src, &s) != 1 || ihl > 15) {
		f->bad = true;
		return;
	}
	inet_pton(AF_INET, "198.51.100.1", &d);
	f->l3 = f->len;
	f->family = AF_INET;
	p = room(f, hlen);
	if (!p)
		return;
	p[0] = (__u8)((o->version ? o->version : 4) << 4 | ihl);
	put16(p + 2, (__u16)hlen);
	put16(p + 4, 0x1234);
	put16(p + 6, o->frag);
	p[8] = 64;
	p[9] = 17; /* UDP */
	memcpy(p + 12, &s, 4);
	memcpy(p + 16, &d, 4);
	/* Options: NOPs, and an end-of-list in the last byte. */
	if (hlen > IPV4_HLEN) {
		memset(p + IPV4_HLEN, 1, hlen - IPV4_HLEN);
		p[hlen - 1] = 0;
	}
	/* A fragment after the first carries no UDP header. */
	if (!(o->frag & IP_OFFMASK))
		udp(f);
	fr_pad(f, 0);
}

void fr_ipv6(struct frame *f, const char *src, unsigned int version)
{
	struct in6_addr s, d;
	__u8 *p;

	if (inet_pton(AF_INET6, src, &s) != 1) {
		f->bad = true;
		return;
	}
	inet_pton(AF_INET6, "2001:db8:ffff::1", &d);
	f->l3 = f->len;
	f->family = AF_INET6;
	p = room(f, IPV6_HLEN);
	if (!p)
		return;
	p[0] = (__u8)((version ? version : 6) << 4);
	p[6] = 17; /* UDP */
	p[7] = 64;
	memcpy(p + 8, &s, 16);
	memcpy(p + 24, &d, 16);
	udp(f);
	fr_pad(f, 0);
}

void fr_icmp6(struct frame *f, const char *src, __u8 type, __u8 hops)
{
	struct in6_addr s, d;
	__u8 *p;

	if (inet_pton(AF_INET6, src, &s) != 1) {
		f->bad = true;
		return;
	}
	inet_pton(AF_INET6, "ff02::1:ff00:2", &d);
	f->l3 = f->len;
	f->family = AF_INET6;
	p = room(f, IPV6_HLEN + ICMP6_LEN);
	if (!p)
		return;
	p[0] = 6 << 4;
	p[6] = 58; /* ICMPv6 */
	p[7] = hops;
	memcpy(p + 8, &s, 16);
	memcpy(p + 24, &d, 16);
	p[IPV6_HLEN] = type;
	/* Code 0, checksum left 0: XDP does not check it. Target: the destination's. */
	inet_pton(AF_INET6, "2001:db8::2", p + IPV6_HLEN + 8);
	fr_pad(f, 0);
}

static void l4(struct frame *f, __u8 proto, __u16 dport, __u8 flags)
{
	unsigned int n = proto == 6 ? 20 : proto == 17 || proto == 1 || proto == 58 ? 8 : 0;
	__u8 *p;

	if (!n)
		return;
	p = room(f, n);
	if (!p)
		return;
	if (proto == 6 || proto == 17) {
		put16(p, 40000);
		put16(p + 2, dport);
	}
	if (proto == 6) {
		p[12] = 5 << 4; /* data offset: 20 bytes */
		p[13] = flags;
	} else if (proto == 17) {
		put16(p + 4, UDP_HLEN);
	} else {
		p[0] = proto == 1 ? 8 : 128; /* echo request */
	}
}

void fr_ipv4_l4(struct frame *f, const char *src, __u8 proto, __u16 dport, __u8 flags, __u16 frag)
{
	struct fr_ip4 o = { .frag = frag };
	unsigned int l3 = f->len;

	/* fr_ipv4() writes a UDP header (first fragments): cut it, write ours. */
	fr_ipv4(f, src, &o);
	if (f->bad)
		return;
	f->data[l3 + 9] = proto;
	f->len = l3 + IPV4_HLEN;
	if (!(frag & IP_OFFMASK))
		l4(f, proto, dport, flags);
	fr_pad(f, 0);
}

void fr_ipv6_l4(struct frame *f, const char *src, __u8 proto, __u16 dport, __u8 flags, bool ext)
{
	unsigned int l3 = f->len;
	__u8 *p;

	fr_ipv6(f, src, 0);
	if (f->bad)
		return;
	f->len = l3 + IPV6_HLEN;
	f->data[l3 + 6] = ext ? 0 : proto;
	if (ext) {
		p = room(f, 8);
		if (!p)
			return;
		p[0] = proto; /* next header; length 0: 8 bytes; a PadN option fills them */
		p[2] = 1;
		p[3] = 4;
	}
	l4(f, proto, dport, flags);
	fr_pad(f, 0);
}

void fr_arp(struct frame *f)
{
	static const __u8 mac[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x01 };
	struct in_addr s, t;
	__u8 *p = room(f, 28);

	if (!p)
		return;
	inet_pton(AF_INET, "198.18.0.1", &s);
	inet_pton(AF_INET, "198.18.0.2", &t);
	put16(p, 1); /* Ethernet */
	put16(p + 2, ETH_P_IP);
	p[4] = ETH_ALEN;
	p[5] = 4;
	put16(p + 6, 1); /* request */
	memcpy(p + 8, mac, ETH_ALEN);
	memcpy(p + 14, &s, 4);
	memcpy(p + 24, &t, 4);
}

static void tlv(struct frame *f, unsigned int type, const void *val, unsigned int len)
{
	__u8 *p = room(f, 2 + len);

	if (!p)
		return;
	put16(p, (__u16)(type << 9 | len));
	memcpy(p + 2, val, len);
}

void fr_lldp(struct frame *f)
{
	static const __u8 chassis[] = { 4, 0x02, 0, 0, 0, 0, 0x01 }; /* MAC address */
	static const __u8 port[] = { 5, 'e', 't', 'h', '0' }; /* interface name */
	static const __u8 ttl[] = { 0, 120 };

	tlv(f, 1, chassis, sizeof(chassis));
	tlv(f, 2, port, sizeof(port));
	tlv(f, 3, ttl, sizeof(ttl));
	tlv(f, 0, NULL, 0);
}

static __u16 csum(const __u8 *p, unsigned int len)
{
	__u32 sum = 0;

	for (unsigned int i = 0; i + 1 < len; i += 2)
		sum += (__u32)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

void fr_pad(struct frame *f, unsigned int len)
{
	unsigned int hlen;
	__u8 *ip;

	if (len > f->len && !room(f, len - f->len))
		return;
	if (f->bad || !f->family)
		return;
	ip = f->data + f->l3;
	if (f->family == AF_INET6) {
		put16(ip + 4, (__u16)(f->len - f->l3 - IPV6_HLEN));
		if (ip[6] == 17) /* UDP */
			put16(ip + IPV6_HLEN + 4, (__u16)(f->len - f->l3 - IPV6_HLEN));
		return;
	}
	hlen = (ip[0] & 0xf) < 5 ? IPV4_HLEN : (ip[0] & 0xf) * 4u;
	put16(ip + 2, (__u16)(f->len - f->l3));
	if (!((ip[6] << 8 | ip[7]) & IP_OFFMASK))
		put16(ip + hlen + 4, (__u16)(f->len - f->l3 - hlen));
	put16(ip + 10, 0);
	put16(ip + 10, csum(ip, hlen));
}

void fr_cut(struct frame *f, unsigned int len)
{
	if (len < f->len)
		f->len = len;
}
