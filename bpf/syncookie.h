/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SYN cookies at XDP (docs/design.md, "SYN cookies"). For a TCP packet to a
 * protected port, before any per-source step:
 *
 *	a SYN			is answered here with a SYN-ACK whose sequence
 *				number is a cookie (bpf_tcp_raw_gen_syncookie_*,
 *				XDP_TX): no state anywhere;
 *	a packet of a connection the host knows (a socket other than the
 *	listener: bpf_skc_lookup_tcp)
 *				goes on, to be limited as any packet;
 *	an ACK with a valid cookie (bpf_tcp_raw_check_syncookie_*)
 *				goes on to the stack, where netfilter's SYNPROXY
 *				opens the real connection to the server;
 *	anything else		(no connection, no valid cookie) is dropped.
 *
 * The MSS, window scale, SACK-permitted and ECN a client offers survive in
 * the timestamp option, as in the kernel's own cookies (RL_SYN_TS_*), when
 * the client sends timestamps; without them the SYN-ACK offers the MSS
 * alone. The packet's checksums are not verified: a frame from a local veth
 * peer may carry a partial one, and a SYN with a bad checksum only earns a
 * SYN-ACK whose cookie no ACK will bring back.
 *
 * Includes clock.h, maps.h, parsing.h, verdict.h and include/ headers only.
 */
#ifndef RL_BPF_SYNCOOKIE_H
#define RL_BPF_SYNCOOKIE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "rl_syn.h"
#include "clock.h"
#include "maps.h"
#include "parsing.h"
#include "verdict.h"

/* rl_syn_step(): the packet goes on to the rules after this one, or to the default rule. */
#define RL_SYN_GO_ON -1
/* rl_syn_step(): it would drop the packet, but dry-run: it goes on as RL_SYN_GO_ON. */
#define RL_SYN_WOULD_DROP -3
/* rules_path(): no rule decided, and a syn-cookies rule has looked at the packet already. */
#define RL_SYN_DONE -2

#define RL_TCPOPT_EOL	    0
#define RL_TCPOPT_NOP	    1
#define RL_TCPOPT_MSS	    2
#define RL_TCPOPT_WINDOW    3
#define RL_TCPOPT_SACK_PERM 4
#define RL_TCPOPT_TIMESTAMP 8
/* The longest TCP header, and the copy of it the cookie is made from. */
#define RL_TCP_MAXLEN 60

/*
 * Is @port (host order) one of --syn-cookies'? The count is a constant, and
 * the loop ends at it: the ranges past it are neither run nor checked by
 * the verifier (which walked all RL_SYN_MAX_RANGES rounds of a loop that
 * only tested the count inside).
 */
static __always_inline int syn_port(__u16 port)
{
	for (int i = 0; i < RL_SYN_MAX_RANGES; i++) {
		if (i >= rl_cfg.syn.n)
			break;
		if (port >= rl_cfg.syn.port[i].lo && port <= rl_cfg.syn.port[i].hi)
			return 1;
	}
	return 0;
}

/*
 * The options of a SYN, read from a copy of its TCP header on the stack
 * (bpf_loop(): one option a round). Every read is masked into th[], so no
 * option, however malformed or cut short, reads outside it; a malformed
 * one ends the walk with what was read before it.
 */
struct syn_opts {
	__u8 th[64]; /* the TCP header, len bytes of it, zeros after */
	__u32 off, len;
	__u32 tsval; /* the client's, host order */
	__u8 wscale; /* the client's, RL_SYN_TS_WSCALE if none */
	__u8 sack, ts;
	__u8 pad;
};

static long syn_opt_one(__u64 i, void *arg)
{
	struct syn_opts *o = arg;
	__u32 off = o->off, kind, size;

	(void)i;
	if (off >= o->len || off >= RL_TCP_MAXLEN)
		return 1;
	kind = o->th[off & 63];
	if (kind == RL_TCPOPT_EOL)
		return 1;
	if (kind == RL_TCPOPT_NOP) {
		o->off = off + 1;
		return 0;
	}
	if (off + 2 > o->len)
		return 1;
	size = o->th[(off + 1) & 63];
	if (size < 2 || off + size > o->len)
		return 1;
	if (kind == RL_TCPOPT_WINDOW && size == 3) {
		__u8 ws = o->th[(off + 2) & 63];

		o->wscale = ws < RL_SYN_MAX_WSCALE ? ws : RL_SYN_MAX_WSCALE;
	} else if (kind == RL_TCPOPT_SACK_PERM && size == 2) {
		o->sack = 1;
	} else if (kind == RL_TCPOPT_TIMESTAMP && size == 10) {
		o->ts = 1;
		o->tsval = (__u32)o->th[(off + 2) & 63] << 24 | (__u32)o->th[(off + 3) & 63] << 16 |
			   (__u32)o->th[(off + 4) & 63] << 8 | o->th[(off + 5) & 63];
	}
	o->off = off + size;
	return 0;
}

/* The one's complement sum @s folded to 16 bits and inverted: a checksum field. */
static __always_inline __u16 syn_fold(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/*
 * Does the host know this connection: a socket for its four-tuple other
 * than the listener (established, a request SYNPROXY opened, time-wait)?
 * @ip and @th are checked packet pointers.
 */
static __always_inline int syn_known(struct xdp_md *ctx, void *ip, struct tcphdr *th, int v6)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	__u32 size;
	int known;

	if (v6) {
		struct ipv6hdr *ip6 = ip;

		__builtin_memcpy(t.ipv6.saddr, &ip6->saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, &ip6->daddr, 16);
		t.ipv6.sport = th->source;
		t.ipv6.dport = th->dest;
		size = sizeof(t.ipv6);
	} else {
		struct iphdr *ip4 = ip;

		t.ipv4.saddr = ip4->saddr;
		t.ipv4.daddr = ip4->daddr;
		t.ipv4.sport = th->source;
		t.ipv4.dport = th->dest;
		size = sizeof(t.ipv4);
	}
	sk = bpf_skc_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	known = sk->state != BPF_TCP_LISTEN;
	bpf_sk_release(sk);
	return known;
}

/*
 * Answer the SYN at @l3 (IP header), @l4 (TCP header, @tlen bytes) with a
 * SYN-ACK carrying a cookie, in place: XDP_TX, or RL_SYN_GO_ON when it
 * cannot (the stack's SYNPROXY then answers it). The frame becomes Ethernet
 * (its VLAN tags kept), a 20- or 40-byte IP header and RL_SYN_TCP_LEN of TCP
 * (less where the buffer cannot grow: see below).
 */
static __always_inline int syn_answer(struct xdp_md *ctx, struct rl_kcounters *cnt, __u64 l3,
				      __u64 l4, __u32 tlen, int v6, __u64 len)
{
	struct syn_opts o = { .len = tlen, .off = 20, .wscale = RL_SYN_TS_WSCALE };
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 addr[8] = {}, cookie, tsval = 0, iplen = v6 ? 40 : 20, seq, opt, tl;
	__u16 sport, dport, mss = v6 ? rl_cfg.syn.mss6 : rl_cfg.syn.mss4;
	__u8 mac[12] = {}, *eth, ecn = 0;
	struct tcphdr *th;
	__u64 sum, newlen;
	__s64 v;
	void *ip;

	if (l3 > 22 || tlen < 20 || tlen > RL_TCP_MAXLEN)
		return RL_SYN_GO_ON;
	/* A SYN longer than the first buffer (a jumbo one's data): to the stack. */
	if (bpf_xdp_get_buff_len(ctx) != (__u64)(end - data))
		return RL_SYN_GO_ON;
	if (bpf_xdp_load_bytes(ctx, l4, o.th, tlen))
		return RL_SYN_GO_ON;
	ip = data + l3;
	if (v6) {
		if (ip + sizeof(struct ipv6hdr) > end)
			return RL_SYN_GO_ON;
		__builtin_memcpy(addr, ip + 8, 32);
		v = bpf_tcp_raw_gen_syncookie_ipv6(ip, (struct tcphdr *)o.th, tlen);
	} else {
		if (ip + sizeof(struct iphdr) > end)
			return RL_SYN_GO_ON;
		__builtin_memcpy(addr, ip + 12, 8);
		v = bpf_tcp_raw_gen_syncookie_ipv4(ip, (struct tcphdr *)o.th, tlen);
	}
	if (v < 0)
		return RL_SYN_GO_ON;
	cookie = (__u32)v;
	if (data + 12 > end)
		return RL_SYN_GO_ON;
	__builtin_memcpy(mac, data, 12);
	bpf_loop(40, syn_opt_one, &o, 0);
	sport = (__u16)o.th[0] << 8 | o.th[1];
	dport = (__u16)o.th[2] << 8 | o.th[3];
	seq = (__u32)o.th[4] << 24 | (__u32)o.th[5] << 16 | (__u32)o.th[6] << 8 | o.th[7];
	if ((o.th[13] & (RL_SYN_ECE | RL_SYN_CWR)) == (RL_SYN_ECE | RL_SYN_CWR))
		ecn = 1;
	if (o.ts) {
		/*
		 * The clock in units of 2^20 ns (about 1 ms: RFC 7323 allows 1 ms
		 * to 1 s a tick, and a shift spares a division), the client's
		 * options in the low bits, as the kernel's cookie_init_timestamp().
		 */
		tsval = (__u32)(bpf_ktime_get_ns() >> 20) & ~((1U << RL_SYN_TS_BITS) - 1);
		tsval |= o.wscale & RL_SYN_TS_WSCALE;
		if (o.sack)
			tsval |= RL_SYN_TS_SACK;
		if (ecn)
			tsval |= RL_SYN_TS_ECN;
	}

	newlen = l3 + iplen + RL_SYN_TCP_LEN;
	/*
	 * In one buffer (above): the frame's length is its first buffer's. A
	 * buffer without room to grow (a veth's, a generic XDP skb's) keeps
	 * the SYN's length: an option-less SYN (54 bytes; a NIC pads it to 60)
	 * gets the MSS alone if it fits, else no option (the client then
	 * assumes 536, or 1220 over IPv6).
	 */
	tl = RL_SYN_TCP_LEN;
	if (newlen != len && bpf_xdp_adjust_tail(ctx, (int)newlen - (int)len)) {
		tl = len >= l3 + iplen + 24 ? 24 : 20;
		newlen = l3 + iplen + tl;
		if (newlen != len && bpf_xdp_adjust_tail(ctx, (int)newlen - (int)len))
			return RL_SYN_GO_ON;
	}
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	ip = data + l3;
	/* Cannot fail (resized above); each family checks its own constant length. */
	if (data + 12 > end || ip + 20 + 20 > end)
		return rl_count_drop(cnt, len);
	__builtin_memcpy(eth, mac + 6, 6);
	__builtin_memcpy(eth + 6, mac, 6);
	if (v6) {
		struct ipv6hdr *ip6 = ip;

		if (ip + 40 + 20 > end)
			return rl_count_drop(cnt, len);
		*(__be32 *)ip6 = bpf_htonl(0x60000000);
		ip6->payload_len = bpf_htons(tl);
		ip6->nexthdr = IPPROTO_TCP;
		ip6->hop_limit = rl_cfg.syn.ttl;
		__builtin_memcpy(&ip6->saddr, addr + 4, 16);
		__builtin_memcpy(&ip6->daddr, addr, 16);
		th = ip + 40;
	} else {
		struct iphdr *ip4 = ip;

		*(__u8 *)ip4 = 0x45;
		ip4->tos = 0;
		ip4->tot_len = bpf_htons(20 + tl);
		ip4->id = 0;
		ip4->frag_off = bpf_htons(0x4000); /* DF */
		ip4->ttl = rl_cfg.syn.ttl;
		ip4->protocol = IPPROTO_TCP;
		ip4->check = 0;
		ip4->saddr = addr[1];
		ip4->daddr = addr[0];
		ip4->check = syn_fold((__u32)bpf_csum_diff(NULL, 0, (void *)ip4, 20, 0));
		th = ip + 20;
	}
	th->source = bpf_htons(dport);
	th->dest = bpf_htons(sport);
	th->seq = bpf_htonl(cookie);
	th->ack_seq = bpf_htonl(seq + 1);
	/* The data offset; SYN, ACK, and ECE when the client set up ECN. */
	((__u8 *)th)[12] = (tl / 4) << 4;
	((__u8 *)th)[13] = RL_SYN_SYN | RL_SYN_ACK | (ecn ? RL_SYN_ECE : 0);
	/* No window: the client sends nothing until SYNPROXY has the server's (as SYNPROXY does). */
	th->window = 0;
	th->check = 0;
	th->urg_ptr = 0;
	if (tl == RL_SYN_TCP_LEN) {
		if ((void *)th + RL_SYN_TCP_LEN > end)
			return rl_count_drop(cnt, len);
		opt = 1;
		((__be32 *)th)[5] = bpf_htonl(RL_TCPOPT_MSS << 24 | 4 << 16 | mss);
		if (o.ts) {
			((__be32 *)th)[6] =
				bpf_htonl(o.sack ? RL_TCPOPT_SACK_PERM << 24 | 2 << 16 |
							   RL_TCPOPT_TIMESTAMP << 8 | 10 :
						   RL_TCPOPT_NOP << 24 | RL_TCPOPT_NOP << 16 |
							   RL_TCPOPT_TIMESTAMP << 8 | 10);
			((__be32 *)th)[7] = bpf_htonl(tsval);
			((__be32 *)th)[8] = bpf_htonl(o.tsval);
			opt = 4;
			if (o.wscale != RL_SYN_TS_WSCALE) {
				((__be32 *)th)[9] =
					bpf_htonl(RL_TCPOPT_NOP << 24 | RL_TCPOPT_WINDOW << 16 |
						  3 << 8 | rl_cfg.syn.wscale);
				opt = 5;
			}
		}
		/* The option words not written: end of options, and zeros. */
		for (int w = 1; w < 5; w++)
			if (w >= opt)
				((__be32 *)th)[5 + w] = 0;
		sum = (__u32)bpf_csum_diff(NULL, 0, (void *)th, RL_SYN_TCP_LEN, 0);
	} else if (tl == 24) {
		if ((void *)th + 24 > end)
			return rl_count_drop(cnt, len);
		((__be32 *)th)[5] = bpf_htonl(RL_TCPOPT_MSS << 24 | 4 << 16 | mss);
		sum = (__u32)bpf_csum_diff(NULL, 0, (void *)th, 24, 0);
	} else {
		sum = (__u32)bpf_csum_diff(NULL, 0, (void *)th, 20, 0);
	}
	if (v6) {
		for (int i = 0; i < 8; i++)
			sum += addr[i];
		sum += bpf_htonl(tl) + bpf_htonl(IPPROTO_TCP);
	} else {
		sum += addr[0] + (__u64)addr[1] + bpf_htonl(IPPROTO_TCP << 16 | tl);
	}
	th->check = syn_fold(sum);
	cnt->syn_sent++;
	cnt->syn_sent_bytes += len;
	return XDP_TX;
}

/* syn_first()'s answers. */
enum {
	RL_SYN_FIRST_NONE = 0, /* rl_syn_step() would let the frame go on untouched */
	RL_SYN_FIRST_NONE4 = 1, /* the same, of untagged IPv4 with a whole header */
	RL_SYN_FIRST_NONE6 = 2, /* the same, of untagged IPv6 but ICMPv6 */
	RL_SYN_FIRST_STEP = 3, /* rl_syn_step() decides */
};

/*
 * Before rl_syn_step(), in line in the main program: does the frame at
 * @data (to @end) need it? Only a TCP header to a port of --syn-cookies
 * does, or a VLAN tag (the step parses past it). Everything else (UDP,
 * TCP to another port, a fragment, a header cut short) it would let go on
 * untouched, after a call and a parse of its own. Checks an IPv4 or IPv6
 * header as the main program's straight lines do, which RL_SYN_FIRST_NONE4
 * and RL_SYN_FIRST_NONE6 let skip their own checks.
 */
static __always_inline int syn_first(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct tcphdr *th;

	if ((void *)(ip + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IP) && ip->version == 4 &&
	    ip->ihl >= 5 && (void *)ip + ip->ihl * 4 <= end) {
		th = (void *)ip + ip->ihl * 4;
		if (ip->protocol == IPPROTO_TCP && !(ip->frag_off & bpf_htons(0x3fff)) &&
		    (void *)(th + 1) <= end && th->doff >= 5 && syn_port(bpf_ntohs(th->dest)))
			return RL_SYN_FIRST_STEP;
		return RL_SYN_FIRST_NONE4;
	}
	if ((void *)(ip6 + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IPV6) &&
	    ip6->version == 6 && ip6->nexthdr != 58 /* IPPROTO_ICMPV6 */) {
		th = (void *)(ip6 + 1);
		if (ip6->nexthdr == IPPROTO_TCP && (void *)(th + 1) <= end && th->doff >= 5 &&
		    syn_port(bpf_ntohs(th->dest)))
			return RL_SYN_FIRST_STEP;
		return RL_SYN_FIRST_NONE6;
	}
	if ((void *)(eth + 1) <= end && is_vlan(eth->h_proto))
		return RL_SYN_FIRST_STEP;
	return RL_SYN_FIRST_NONE;
}

/*
 * The SYN-cookie step for the packet of @ctx: XDP_TX (a SYN answered),
 * XDP_DROP (no connection and no valid cookie, counted), RL_SYN_GO_ON, or
 * RL_SYN_WOULD_DROP (dry-run: goes on, counted as would-drop).
 * @ports: only to the ports of --syn-cookies (the default rule's step); 0:
 * any port (a syn-cookies rule, whose match chose the packet). @dry_run: a
 * packet that would be dropped goes on instead, counted as would-drop. A
 * global function: verified once, out of the main program's frame.
 */
__noinline int rl_syn_step(struct xdp_md *ctx, __u32 ports, __u32 dry_run)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data, .end = end };
	__u64 len = frame_len(ctx, data, end), l3, l4;
	struct rl_kcounters *cnt;
	__u32 zero = 0, bad = 0;
	struct tcphdr *th;
	__be16 proto;
	void *ip;
	__u8 flags;
	int v6, err;

	cnt = bpf_map_lookup_elem(&rl_counters, &zero);
	if (!cnt || parse_eth(&c, &proto, &bad))
		return RL_SYN_GO_ON;
	ip = c.pos;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip4 = ip;

		/* Not a fragment (TCP is not fragmented, and XDP cannot reassemble). */
		if ((void *)(ip4 + 1) > end || ip4->version != 4 || ip4->ihl < 5 ||
		    ip4->protocol != IPPROTO_TCP || (ip4->frag_off & bpf_htons(0x3fff)))
			return RL_SYN_GO_ON;
		th = ip + ip4->ihl * 4;
		v6 = 0;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = ip;

		/* No extension header is walked (as rules): such a packet goes on. */
		if ((void *)(ip6 + 1) > end || ip6->version != 6 || ip6->nexthdr != IPPROTO_TCP)
			return RL_SYN_GO_ON;
		th = ip + sizeof(*ip6);
		v6 = 1;
	} else {
		return RL_SYN_GO_ON;
	}
	if ((void *)(th + 1) > end || th->doff < 5)
		return RL_SYN_GO_ON;
	if (ports && !syn_port(bpf_ntohs(th->dest)))
		return RL_SYN_GO_ON;
	flags = ((__u8 *)th)[13];
	if ((flags & (RL_SYN_SYN | RL_SYN_ACK | RL_SYN_RST | RL_SYN_FIN)) == RL_SYN_SYN) {
		l3 = ip - data;
		l4 = (void *)th - data;
		return syn_answer(ctx, cnt, l3, l4, th->doff * 4, v6, len);
	}
	if (syn_known(ctx, ip, th, v6))
		return RL_SYN_GO_ON;
	if ((flags & (RL_SYN_SYN | RL_SYN_ACK | RL_SYN_RST)) == RL_SYN_ACK) {
		if (v6)
			err = bpf_tcp_raw_check_syncookie_ipv6(ip, th);
		else
			err = bpf_tcp_raw_check_syncookie_ipv4(ip, th);
		if (!err) {
			cnt->syn_valid++;
			return RL_SYN_GO_ON;
		}
	}
	cnt->syn_invalid++;
	if (dry_run) {
		cnt->would_drop++;
		cnt->would_drop_bytes += len;
		return RL_SYN_WOULD_DROP;
	}
	return rl_count_drop(cnt, len);
}

#endif /* RL_BPF_SYNCOOKIE_H */
