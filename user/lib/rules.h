/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rules in userspace: the model of one rule, its parser (the words of
 * "rule add IFACE NAME ..." through the option table), validation, printing
 * back, matching, and an ordered rule set whose last rule is "default". The
 * matching is defined in docs/design.md ("Rules"); the XDP program does the
 * same with include/rl_rules.h and include/rl_block.h.
 */
#ifndef RL_RULES_USER_H
#define RL_RULES_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "policy.h"
#include "rl_rules.h"

struct rl_json;

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
 * Parse the words after "rule add IFACE" (NULL-terminated):
 *	NAME [--src CIDR[,CIDR...]]... [--src-file FILE]... [--proto PROTO]
 *	[--dport N|N-M] [--tcp-flags FLAGS]
 *	(--allow | --deny | --rate RATE [POLICY OPTIONS] [--action dry-run] [--block DUR])
 *	[--before NAME]
 * into @r (initialized here; rl_rule_free() it after success). @before gets
 * --before's NAME (NULL without it); with @before NULL, --before is refused
 * (a rules file orders its rules by line). Returns 0, or -EINVAL with a
 * message in @err naming the problem (a --src-file's FILE:LINE), @r freed.
 */
int rl_rule_parse(struct rl_rule *r, const char **before, const char *const *words, char *err,
		  size_t errlen);

/*
 * Check a rule filled by hand (or by rl_rule_parse()) and make it ready to
 * match: sorts and deduplicates its prefixes, builds the ranges, computes
 * params. -EINVAL with a message, -ENOMEM.
 */
int rl_rule_prepare(struct rl_rule *r, char *err, size_t errlen);

/*
 * Add one prefix ("198.18.0.0/15", "2001:db8::/32", "198.18.0.1" is /32), or
 * none with RL_SRC_NONE: the rule has a source match either way. -EINVAL, -ENOMEM.
 */
int rl_rule_add_src(struct rl_rule *r, const char *cidr, char *err, size_t errlen);
/* Add every prefix of FILE (one per line, '#' comments); errors name FILE:LINE. */
int rl_rule_add_src_file(struct rl_rule *r, const char *path, char *err, size_t errlen);

/* The word of an empty source list (--src none): the rule matches no source. */
#define RL_SRC_NONE "none"

/* True if the rule has a source match that holds no prefix: it matches nothing. */
static inline bool rl_rule_src_empty(const struct rl_rule *r)
{
	return r->src_given && !(r->n4 + r->n6);
}

/* A rule name: 1-31 characters of [A-Za-z0-9_.-], not starting with '-'. */
bool rl_rule_name_ok(const char *name);

/*
 * The rule as the words of "rule add" (without "rule add IFACE"), which
 * rl_rule_parse() reads back to the same rule, into @buf. Returns the length
 * the whole text needs, as snprintf() does (every prefix is written out).
 */
size_t rl_rule_format(const struct rl_rule *r, char *buf, size_t len);

/* The rule as one JSON object (name, match, action, policy). */
void rl_rule_json(struct rl_json *w, const struct rl_rule *r);

/* 1 if @r matches @p (prepared rule; a key of all ones, "no source", matches no --src). */
bool rl_rule_match(const struct rl_rule *r, const struct rl_pkt_info *p);

/* TCP flags as tcpdump letters ("SA"; "." for none) into @buf (at least 9 bytes). */
char *rl_tcp_flags_str(__u8 flags, char *buf);
/* "S", "SA", "FPU", "." (none): 0 or -EINVAL. */
int rl_parse_tcp_flag_letters(const char *s, __u8 *flags);
/* "tcp", "udp", "icmp", "icmpv6" or 0-255. */
int rl_parse_proto(const char *s, __u8 *proto);
const char *rl_proto_name(__u8 proto, char *buf, size_t len);

/* An ordered rule set; rules[n - 1] is always "default". */
struct rl_ruleset {
	struct rl_rule *rules;
	size_t n, cap;
	size_t nprefixes; /* over all rules */
};

/* A set holding only "default", a limit rule with @pol and @o (an attach policy). */
int rl_ruleset_init(struct rl_ruleset *s, const struct rl_policy *pol, const struct rl_opts *o,
		    char *err, size_t errlen);
void rl_ruleset_free(struct rl_ruleset *s);
/*
 * Insert @r before the rule named @before (NULL or "default": last before
 * default). On success the set owns @r's memory and @r is emptied; on error
 * @r is untouched. Errors: -EEXIST (a rule of that name), -ENOENT (no rule
 * @before), -ENOSPC (more than RL_MAX_RULES rules or RL_MAX_PREFIXES
 * prefixes), -EINVAL (a rule named "default" or not prepared), each with a
 * message.
 */
int rl_ruleset_add(struct rl_ruleset *s, struct rl_rule *r, const char *before, char *err,
		   size_t errlen);
/* Delete the rule @name: -ENOENT (no such rule), -EINVAL ("default"). */
int rl_ruleset_del(struct rl_ruleset *s, const char *name, char *err, size_t errlen);
/* The index of rule @name, or -1. */
int rl_ruleset_find(const struct rl_ruleset *s, const char *name);
/* The index of the first rule matching @p (default matches everything). */
size_t rl_ruleset_match(const struct rl_ruleset *s, const struct rl_pkt_info *p);

#endif /* RL_RULES_USER_H */
