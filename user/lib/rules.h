/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rules from the option table and back: a rule from the words of "rule add
 * IFACE NAME ..." or from options given one by one (apply's file), the
 * checks of a rule as a whole, printing back as "rule add" words and as
 * JSON, and an ordered rule set whose last rule is "default". The model of
 * one rule, its match values and matching are rule.h's, below the table.
 */
#ifndef RL_RULES_USER_H
#define RL_RULES_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "config.h"
#include "policy.h"
#include "rl_rules.h"
#include "rule.h"

struct rl_args;
struct rl_json;

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
 * The rule that options given one by one make (apply's file): into @a,
 * rl_args_defaults() with a->rule = @r, rl_rule_init()'d, then each option
 * through rl_opt_give(). Checks what a rule may not say beyond single values
 * (an action and only one, --rate for a limit, options of the interface
 * rather than of a rule), names @r @name, takes its action, policy and
 * options from @a and prepares it, as rl_rule_parse() does with its words.
 * @before as rl_rule_parse()'s. Returns 0, or -EINVAL with the message and
 * the option it is about apart (*@about, as rl_params_init_about()), -ENOMEM;
 * @r is freed on error.
 */
int rl_rule_from_args(struct rl_rule *r, const char *name, const struct rl_args *a,
		      const char **before, const char **about, char *err, size_t errlen);

/*
 * The rule as the words of "rule add" (without "rule add IFACE"), which
 * rl_rule_parse() reads back to the same rule, into @buf. Returns the length
 * the whole text needs, as snprintf() does (every prefix is written out).
 */
size_t rl_rule_format(const struct rl_rule *r, char *buf, size_t len);

/* The rule as one JSON object (name, match, action, policy). */
void rl_rule_json(struct rl_json *w, const struct rl_rule *r);

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
