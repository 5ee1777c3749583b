/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rules (see "Rules" in docs/design.md): what the XDP program and userspace
 * share. The limits of a rule set, a packet's fields as rules see them, the
 * L4 part of a rule's match and the per-rule counters. Fixed-width types and
 * explicit padding only; rl_l4_match() is a pure function for both sides.
 */
#ifndef RL_RULES_H
#define RL_RULES_H

#include <linux/types.h>
#include "rl_algo.h"
#include "rl_common.h"
#include "rl_key.h"

/*
 * Rules per interface, "default" included. Rules are tried in order on every
 * packet that reaches them, so the count bounds the per-packet work (and the
 * verifier's loop); 64 covers exemptions, per-customer and per-port rules.
 */
#define RL_MAX_RULES 64
/*
 * Source prefixes per interface, over all rules and both families: the
 * prefix maps are sized for it at attach. A million covers the largest
 * public block lists (a full BGP table is about 1.2 million routes, mostly
 * IPv4 /24s that such lists aggregate).
 */
#define RL_MAX_PREFIXES 1000000
/* A rule's name: at most 31 characters of [A-Za-z0-9_.-], and its NUL. */
#define RL_RULE_NAME_LEN 32
/* The name of the last rule, which the attach policy makes and nothing deletes. */
#define RL_RULE_DEFAULT "default"
/* Lines of a --src-file, comments and blank lines included. */
#define RL_SRC_FILE_MAX_LINES 1000000
/* Longest --block: a year (366 days), in ns. */
#define RL_BLOCK_MAX_NS (366ULL * 86400 * 1000000000)

/* A rule's action. */
enum rl_rule_action {
	RL_RULE_ALLOW = 0, /* pass, never limited */
	RL_RULE_DENY = 1, /* drop */
	RL_RULE_LIMIT = 2, /* the rule's own policy, its own per-source state */
	/*
	 * SYN cookies (bpf/syncookie.h) for the TCP packets it matches: a SYN
	 * answered, a packet of no connection without a valid cookie dropped
	 * (counted denied); the others go on to the next rules.
	 */
	RL_RULE_SYN = 3,
};

/* TCP flags as in the 14th byte of the TCP header (tcpdump's letters). */
#define RL_TCP_FIN 0x01 /* F */
#define RL_TCP_SYN 0x02 /* S */
#define RL_TCP_RST 0x04 /* R */
#define RL_TCP_PSH 0x08 /* P */
#define RL_TCP_ACK 0x10 /* A */
#define RL_TCP_URG 0x20 /* U */
#define RL_TCP_ECE 0x40 /* E */
#define RL_TCP_CWR 0x80 /* W */

/* Which fields of a rule's match are given (struct rl_rule_l4.fields). */
#define RL_MATCH_PROTO 0x01
#define RL_MATCH_DPORT 0x02
#define RL_MATCH_FLAGS 0x04

/* IP protocol numbers with a name in rules and traces. */
#define RL_PROTO_ICMP	1
#define RL_PROTO_TCP	6
#define RL_PROTO_UDP	17
#define RL_PROTO_ICMPV6 58

/* The L4 part of a rule's match: all given fields must hold. */
struct rl_rule_l4 {
	__u8 fields; /* RL_MATCH_* */
	__u8 proto; /* IPv4 protocol, or IPv6 fixed header's next header */
	__u8 tcp_mask; /* flags & tcp_mask == tcp_value */
	__u8 tcp_value;
	__u16 dport_lo; /* host order, inclusive */
	__u16 dport_hi;
};

/* What a packet shows (struct rl_pkt_info.info). */
#define RL_PKT_PROTO 0x01 /* proto is known (always, for a real packet) */
#define RL_PKT_L4    0x02 /* the L4 header is there: dport (tcp, udp) and tcp_flags (tcp) */
/*
 * Userspace only, never set by the XDP program: a trace line that names no
 * source (simulate). Its src is then meaningless: it matches no --src and
 * is not masked. A frame always has a source, ffff:...:ffff included.
 */
#define RL_PKT_NOSRC 0x80

/*
 * A packet as rules see it. The source is the real, unmasked one, IPv4 as
 * ::ffff:a.b.c.d (an IPv6 packet from ::ffff:a.b.c.d is that IPv4 source).
 * No L4 (RL_PKT_L4 clear): an IPv4 fragment with a non-zero offset, or an
 * L4 header cut short; no rule with a port or flags matches it. The proto of
 * an IPv6 packet is its fixed header's next header: with extension headers,
 * the first one's number (no extension header is walked), and no L4.
 */
struct rl_pkt_info {
	struct rl_key src;
	__u16 dport; /* host order; tcp and udp with RL_PKT_L4 */
	__u8 proto;
	__u8 tcp_flags; /* tcp with RL_PKT_L4 */
	__u8 info; /* RL_PKT_* */
	__u8 pad[3];
};

/* 1 if the L4 fields of @p satisfy @m. Source prefixes are matched apart. */
RL_INLINE int rl_l4_match(const struct rl_rule_l4 *m, const struct rl_pkt_info *p)
{
	if ((m->fields & RL_MATCH_PROTO) && (!(p->info & RL_PKT_PROTO) || p->proto != m->proto))
		return 0;
	/* Ports and flags are only ever asked of tcp and udp rules (userspace checks). */
	if ((m->fields & (RL_MATCH_DPORT | RL_MATCH_FLAGS)) && !(p->info & RL_PKT_L4))
		return 0;
	if ((m->fields & RL_MATCH_DPORT) && (p->dport < m->dport_lo || p->dport > m->dport_hi))
		return 0;
	if ((m->fields & RL_MATCH_FLAGS) && (p->tcp_flags & m->tcp_mask) != m->tcp_value)
		return 0;
	return 1;
}

/*
 * Per-rule counters. Every packet that a rule decides is counted once in
 * passed or dropped (the verdict) and once in allowed, denied, limited,
 * blocked, agg_limited or iface_limited (the reason); would_drop counts the
 * packets of a dry-run rule that it would have dropped, which are passed.
 * So, with L = limited + blocked + agg_limited + iface_limited,
 *	passed + dropped = allowed + denied + L + under the limit,
 *	dropped = denied + L - would_drop.
 */
struct rl_rule_counters {
	__u64 passed, passed_bytes;
	__u64 dropped, dropped_bytes;
	__u64 allowed; /* allow rule */
	__u64 denied; /* deny rule */
	__u64 limited; /* limit rule, over the limit (the packet that starts a block too) */
	__u64 blocked; /* limit rule, source blocked */
	__u64 would_drop; /* dry-run: would have been dropped, passed */
	/* Refused by the rule's levels (include/rl_agg.h): its prefix aggregate, its whole. */
	__u64 agg_limited, iface_limited;
};

/*
 * Rules in the data path (docs/design.md, "Rules in the data path"). Every
 * rule but "default" is compiled into the program (struct rl_rules_cfg in
 * ".rodata.cfg", like struct rl_config), so with no rules the verifier drops
 * every rule path. A rule has a slot, 0 to RL_MAX_RULES - 2, that stays its
 * own while it exists: it indexes the per-rule counters, is its bit in the
 * source-prefix masks and is part of its per-source state keys, with a
 * generation that changes whenever the slot is given to a new rule.
 */
#define RL_RULE_SLOTS (RL_MAX_RULES - 1)
/*
 * Per-source states of all limit rules of an interface (an LRU hash): sized
 * for the sources of a few busy limit rules, a quarter of the default table.
 */
#define RL_RULE_MAX_SOURCES (RL_DEFAULT_MAX_SOURCES / 4)

/* struct rl_krule.given */
#define RL_GIVEN_ALGO	 0x01
#define RL_GIVEN_BURST	 0x02
#define RL_GIVEN_WINDOW	 0x04
#define RL_GIVEN_INITIAL 0x08
#define RL_GIVEN_PREFIX4 0x10
#define RL_GIVEN_PREFIX6 0x20
#define RL_GIVEN_ACTION	 0x40
#define RL_GIVEN_FAIL	 0x80

struct rl_krule {
	char name[RL_RULE_NAME_LEN];
	__u8 slot; /* 0 to RL_RULE_SLOTS - 1 */
	__u8 action; /* enum rl_rule_action */
	__u8 has_src; /* matched by prefix: its bit in the prefix tries */
	__u8 pad;
	__u16 gen; /* of the slot, in the state keys */
	__u16 given; /* RL_GIVEN_*: which options the rule names (rule list prints them) */
	struct rl_rule_l4 l4;
	__u64 block_ns; /* limit rules: 0, or --block */
	/*
	 * Limit rules: params, mask4/mask6 (the rule's prefixes), action
	 * (dry-run), the policy as given (rule list). Deny rules: action.
	 */
	struct rl_config cfg;
};

struct rl_rules_cfg {
	__u32 n; /* rules before "default", in order in r[] */
	__u32 pair; /* the prefix tries in use: 0 rl_src4a/rl_src6a, 1 the b pair */
	__u32 need_l4; /* some rule matches on proto, port or flags */
	__u32 has_src; /* some rule has source prefixes */
	__u32 need_ports; /* some rule has --dport: look the port up in rl_ports */
	__u32 pad0;
	__u64 any_mask; /* the slots of the rules without source prefixes */
	/*
	 * Per IP protocol, the slots of the rules that can match it (those
	 * without --proto and those with it): a packet of a protocol no rule
	 * names skips the rules that name one without looking at them.
	 */
	__u64 proto_mask[256];
	__u16 slot_gen[RL_RULE_SLOTS]; /* the last generation each slot was given */
	__u16 pad[RL_MAX_RULES - RL_RULE_SLOTS];
	struct rl_krule r[RL_RULE_SLOTS];
	/*
	 * What lets a packet that no rule can match skip the lookups
	 * (bpf/rules.h, rules_path()): the slots of the rules with source
	 * prefixes and of those with --dport, and whether any prefix of each
	 * family exists (rl_pfx and the tries are read only then).
	 */
	__u64 src_mask;
	__u64 port_mask;
	__u32 has_src4, has_src6;
};

/*
 * rl_ports: per pair (the tries' pair), per protocol (0 tcp, 1 udp), per
 * destination port, the slots of the rules that a packet with that port can
 * match (those without --dport, and those whose range holds it). A packet
 * to a port no rule names skips the port rules without looking at them.
 */
#define RL_PORT_TABLE (2 * 2 * 65536)

/*
 * rl_dport_bits (the program's .rodata, made from rl_rules at each load):
 * per protocol (0 tcp, 1 udp), one bit per destination port, set when a
 * rule with --dport of that protocol holds the port; bit htons(port), the
 * port as the packet holds it, so the program tests it without a byte
 * swap. A packet to a port
 * whose bit is clear leaves out every --dport rule on one word of the
 * program's own data (16 KiB in all), without a lookup of rl_ports (2 MiB):
 * the common case of a few port rules and traffic to other ports.
 */
#define RL_DPORT_WORDS (65536 / 64)

/*
 * rl_pfx: per pair (the tries' pair), per family (0 IPv4, 1 IPv6), a bitmap
 * of the /RL_PFX_BITS networks (the first RL_PFX_BITS bits of the address)
 * that a prefix of that family covers or lies in: a source whose network's
 * bit is clear is in no prefix, and skips the trie's lookup. 2^RL_PFX_BITS
 * bits a bitmap, 2 MiB in all; a /22 of IPv4 (1024 addresses), of IPv6 the
 * first 22 bits.
 */
#define RL_PFX_BITS  22
#define RL_PFX_WORDS (1U << (RL_PFX_BITS - 6))
#define RL_PFX_TABLE (2 * 2 * RL_PFX_WORDS)

/* The word of rl_pfx, and the bit in it, of an address whose first 32 bits are @hi (host order). */
RL_INLINE __u32 rl_pfx_word(__u32 pair, __u32 v6, __u32 hi)
{
	return (pair * 2 + v6) * RL_PFX_WORDS + (hi >> (32 - RL_PFX_BITS + 6));
}

RL_INLINE __u64 rl_pfx_bit(__u32 hi)
{
	return 1ULL << ((hi >> (32 - RL_PFX_BITS)) & 63);
}

/* Keys of the prefix tries (BPF_MAP_TYPE_LPM_TRIE): prefix length, then the address. */
struct rl_lpm4 {
	__u32 prefixlen;
	__u32 addr; /* network order */
};

struct rl_lpm6 {
	__u32 prefixlen;
	__u32 addr[4]; /* network order */
};

/*
 * A prefix's value: match, the slots of every rule with this prefix or a
 * shorter one that covers it (so the longest match alone answers for all
 * rules), and own, those that list this prefix (to read the rules back).
 */
struct rl_lpm_val {
	__u64 match;
	__u64 own;
};

/* A source's state under one limit rule (rl_rstate). */
struct rl_rstate_key {
	struct rl_key src; /* masked by the rule's prefixes, link-local whole */
	__u16 slot;
	__u16 gen;
};

#endif /* RL_RULES_H */
