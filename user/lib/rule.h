/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One rule in userspace: its model, the values of its match options read
 * from text (what --src, --src-file, --proto, --dport and --tcp-flags take),
 * validation and matching. It sits below the option table, whose match
 * options write into a rule through these functions; reading a whole rule
 * from words or options, printing it back and the rule set are rules.h's,
 * above the table. The matching is defined in docs/design.md ("Rules"); the
 * XDP program does the same with include/rl_rules.h and include/rl_block.h.
 */
#ifndef RL_RULE_H
#define RL_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "policy.h"
#include "rl_rules.h"

/* An IPv4 prefix: addr in network order, host bits zero. */
struct rl_prefix4 {
	__u32 addr;
	__u32 len; /* 0-32 */
};

/* An IPv6 prefix (never inside ::ffff:0:0/96 past /96: those are IPv4). */
struct rl_prefix6 {
	__u32 addr[4]; /* network order */
	__u32 len; /* 0-128 */
};

/* The prefixes of one family merged into disjoint, sorted ranges (host order). */
struct rl_range4 {
	__u32 lo, hi;
};
struct rl_range6 {
	unsigned __int128 lo, hi;
};

struct rl_rule {
	char name[RL_RULE_NAME_LEN];
	/*
	 * Match. Source prefixes: a set (sorted, without duplicates once
	 * prepared); a packet matches when any member holds its source.
	 * src_given: the rule has a source match (--src, --src-file, src:).
	 * Without one it matches any source; with one whose set is empty
	 * (an empty file, src: [], --src none) it matches no source: a block or
	 * allow list fed from a feed that came back empty never turns into
	 * "everything".
	 */
	bool src_given;
	struct rl_prefix4 *src4;
	size_t n4, cap4;
	struct rl_prefix6 *src6;
	size_t n6, cap6;
	struct rl_rule_l4 l4;
	/* Action. */
	enum rl_rule_action action;
	struct rl_policy pol; /* RL_RULE_LIMIT */
	struct rl_opts o; /* o.action: drop or dry-run (deny and limit rules) */
	struct rl_params params; /* from pol, by rl_rule_prepare() */
	struct rl_level lvl[RL_LVL_N]; /* its levels above the source, from pol, the same way */
	__u64 block_ns; /* RL_RULE_LIMIT: block an over-limit source this long; 0: never */
	/* Built by rl_rule_prepare() for rl_rule_match(). */
	struct rl_range4 *r4;
	size_t nr4;
	struct rl_range6 *r6;
	size_t nr6;
};

/* An empty rule: no name, no match, no action. */
void rl_rule_init(struct rl_rule *r);
void rl_rule_free(struct rl_rule *r);

/*
 * Check a rule filled by hand (or by rl_rule_parse()) and make it ready to
 * match: sorts and deduplicates its prefixes, builds the ranges, computes
 * params. -EINVAL with a message, -ENOMEM. rl_rule_prepare_about() names
 * the option at fault apart from the text, as rl_params_init_about() does.
 */
int rl_rule_prepare(struct rl_rule *r, char *err, size_t errlen);
int rl_rule_prepare_about(struct rl_rule *r, const char **about, char *err, size_t errlen);

/*
 * Add one prefix ("198.18.0.0/15", "2001:db8::/32", "198.18.0.1" is /32), or
 * none with RL_SRC_NONE: the rule has a source match either way. -EINVAL, -ENOMEM.
 */
int rl_rule_add_src(struct rl_rule *r, const char *cidr, char *err, size_t errlen);
/* Add every prefix of FILE (one per line, '#' comments); errors name FILE:LINE. */
int rl_rule_add_src_file(struct rl_rule *r, const char *path, char *err, size_t errlen);

/*
 * The values of the match options, as the option table hands them over:
 * each sets its part of @r's match from @val, or fails (-EINVAL, -ENOMEM)
 * with a message about the value ("'99999': a port is a whole number from 0
 * to 65535"), which the caller prefixes with where it was given.
 *	src		CIDR[,CIDR...], '' or none: an empty list; may repeat, adding
 *	src-file	FILE: the rule has a source match even if FILE lists nothing
 *	proto		tcp, udp, icmp, icmpv6 or 0-255
 *	dport		N or N-M
 *	tcp-flags	syn, or VALUE/MASK in tcpdump's letters
 */
int rl_rule_set_src(struct rl_rule *r, const char *val, char *err, size_t errlen);
int rl_rule_set_src_file(struct rl_rule *r, const char *val, char *err, size_t errlen);
int rl_rule_set_proto(struct rl_rule *r, const char *val, char *err, size_t errlen);
int rl_rule_set_dport(struct rl_rule *r, const char *val, char *err, size_t errlen);
int rl_rule_set_tcp_flags(struct rl_rule *r, const char *val, char *err, size_t errlen);

/* The word of an empty source list (--src none): the rule matches no source. */
#define RL_SRC_NONE "none"

/* True if the rule has a source match that holds no prefix: it matches nothing. */
static inline bool rl_rule_src_empty(const struct rl_rule *r)
{
	return r->src_given && !(r->n4 + r->n6);
}

/* A rule name: 1-31 characters of [A-Za-z0-9_.-], not starting with '-'. */
bool rl_rule_name_ok(const char *name);

/* 1 if @r matches @p (prepared rule; a key of all ones, "no source", matches no --src). */
bool rl_rule_match(const struct rl_rule *r, const struct rl_pkt_info *p);

/* TCP flags as tcpdump letters ("SA"; "." for none) into @buf (at least 9 bytes). */
char *rl_tcp_flags_str(__u8 flags, char *buf);
/* "S", "SA", "FPU", "." (none): 0 or -EINVAL. */
int rl_parse_tcp_flag_letters(const char *s, __u8 *flags);
/* One of rl_proto_names ("tcp", "udp", "icmp", "icmpv6") or 0-255. */
int rl_parse_proto(const char *s, __u8 *proto);
/* The protocol names rl_parse_proto() takes, NULL-terminated: also --proto's choices. */
extern const char *const rl_proto_names[];
const char *rl_proto_name(__u8 proto, char *buf, size_t len);

#endif /* RL_RULE_H */
