/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SYN cookies at XDP (docs/design.md, "SYN cookies"): what the XDP program
 * (bpf/syncookie.h) and userspace share. The protected ports and what the
 * SYN-ACK advertises are part of the configuration (struct rl_config's
 * syn), compiled into the program like the rest of the policy.
 */
#ifndef RL_SYN_H
#define RL_SYN_H

#include <linux/types.h>

/*
 * Port ranges of --syn-cookies. Each costs two compares on a TCP packet,
 * unrolled over the constant count; 16 covers a host's public services
 * (a wider need is a range, 8000-8999, or a rule with --dport).
 */
#define RL_SYN_MAX_RANGES 16

/* TCP flags as in the 14th byte of the TCP header. */
#define RL_SYN_FIN 0x01
#define RL_SYN_SYN 0x02
#define RL_SYN_RST 0x04
#define RL_SYN_ACK 0x10
#define RL_SYN_ECE 0x40
#define RL_SYN_CWR 0x80

/*
 * The timestamp cookie (the kernel's layout, which netfilter's SYNPROXY
 * decodes from the echo in the client's ACK): the low 6 bits of the
 * SYN-ACK's TSval carry the client's options, the rest is the clock.
 */
#define RL_SYN_TS_WSCALE 0x0f /* the client's window scale; 0xf: none */
#define RL_SYN_TS_SACK	 0x10 /* the client offered SACK */
#define RL_SYN_TS_ECN	 0x20 /* the client asked for ECN (ECE and CWR in its SYN) */
#define RL_SYN_TS_BITS	 6
/* The largest window scale TCP allows (RFC 7323). */
#define RL_SYN_MAX_WSCALE 14
/*
 * The SYN-ACK's TCP header: 20 bytes and 20 of options (MSS; SACK-permitted
 * or two NOPs, and timestamps; NOP and window scale), the unused end filled
 * with end-of-option-list bytes. One size for every SYN-ACK: one bounds
 * check, one checksum length.
 */
#define RL_SYN_TCP_LEN 40

/*
 * What a SYN-ACK says when the interface's own values are not known (tests,
 * simulate): a 1500-byte MTU, the window scale Linux picks with its default
 * buffers (tcp_rmem's 6 MiB), the usual TTL.
 */
#define RL_SYN_DEFAULT_MSS4   1460
#define RL_SYN_DEFAULT_MSS6   1440
#define RL_SYN_DEFAULT_WSCALE 7
#define RL_SYN_DEFAULT_TTL    64

struct rl_syn_range {
	__u16 lo, hi; /* host order, inclusive */
};

struct rl_syn_cfg {
	__u16 n; /* ranges in port[]; 0: SYN cookies off */
	__u16 mss4; /* the MSS the SYN-ACK advertises over IPv4 (MTU - 40) */
	__u16 mss6; /* over IPv6 (MTU - 60) */
	__u8 wscale; /* the window scale it advertises (what the stack would choose) */
	__u8 ttl; /* its TTL or hop limit */
	struct rl_syn_range port[RL_SYN_MAX_RANGES];
};

#endif /* RL_SYN_H */
