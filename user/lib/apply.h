/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The configuration file of "apply FILE" (YAML, read with libyaml): the
 * model, its loader, and the plan that makes the kernel match it.
 *
 *	interfaces:
 *	  eth0:                   an interface of this network namespace
 *	    mode: skb             attach options, policy and limiter options:
 *	    rate: 1000            every key is an option's long name (opts.c)
 *	    rules:                optional: a list of rules, each a mapping of
 *	      - name: web         name and rule options (allow/deny: true)
 *	        proto: tcp
 *	  eth1:
 *	    share: eth0           eth0's limiter (attach --share): only mode too
 *
 * A file is the whole wanted state of each interface it names: an option it
 * leaves out has its default, not the value it had before.
 */
#ifndef RL_APPLY_H
#define RL_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include "config.h"
#include "pins.h"
#include "policy.h"
#include "rules.h"

/* One interface of the file. */
struct rl_apply_iface {
	char name[IF_NAMESIZE];
	unsigned long line; /* where it is named in the file (1-based) */
	int mode; /* enum rl_mode */
	__u64 max_sources, max_sources6; /* max_sources6 already defaulted */
	struct rl_policy pol;
	struct rl_opts o;
	struct rl_config cfg; /* built from pol and o as a first configuration */
	struct rl_ruleset rules; /* the file's rules, then "default" */
	size_t nrules; /* rules besides "default" */
	unsigned long rules_line; /* the "rules:" key, 0 if none */
	char share[IF_NAMESIZE]; /* share: the interface of the file whose limiter it runs, or "" */
	unsigned long share_line;
};

struct rl_apply_file {
	char path[256];
	struct rl_apply_iface *ifs;
	size_t n;
};

/*
 * Read and check @path: the syntax, every key and value, each interface's
 * policy as a whole and its rules. 0, or -EINVAL (-ENOENT, -ENOMEM...) with a
 * message "FILE:LINE: ..." naming the key in @err. Touches no kernel state.
 */
int rl_apply_load(struct rl_apply_file *f, const char *path, char *err, size_t errlen);
void rl_apply_free(struct rl_apply_file *f);

/*
 * One policy to replay (simulate --compare): @spec is a YAML mapping of an
 * interface's keys written inline ("{rate: 500, burst: 50}"), a file holding
 * such a mapping, or apply's file (interfaces:), FILE:IFACE naming its
 * interface (FILE alone if it names one). Checked as apply checks an
 * interface, into @ifc (free its rules with rl_ruleset_free()); its name is
 * IFACE, or "policy". Messages name FILE:LINE, or the inline text.
 */
int rl_apply_load_policy(struct rl_apply_iface *ifc, const char *spec, char *err, size_t errlen);

enum rl_apply_action {
	RL_APPLY_NONE, /* as the file says already */
	RL_APPLY_ATTACH, /* not attached: attach */
	RL_APPLY_SET, /* attached with another policy: set it live */
	RL_APPLY_DETACH, /* attached, not in the file, --prune: detach */
	RL_APPLY_RULES, /* attached with this policy, other rules: only the rules */
	RL_APPLY_SHARE, /* share: not attached: attach --share */
};

/* How the file's rules differ from the live ones, rule by rule. */
enum rl_apply_rule_op {
	RL_APPLY_RULE_ADD, /* new: new */
	RL_APPLY_RULE_DEL, /* gone: old */
	RL_APPLY_RULE_CHANGE, /* same name, other rule: old and new */
	RL_APPLY_RULE_ORDER, /* the rules in both, in another order: old and new, their names */
};

struct rl_apply_rule_change {
	enum rl_apply_rule_op op;
	/* A rule as the words of "rule add" without "rule add IFACE" (rl_rule_format()). */
	char *old, *new;
};

/*
 * The changes that make the rules of @cur (the live set) those of @want,
 * "default" left out (the interface's policy is compared apart). Both are
 * compared in printed form, so a rule read back from the maps equals the
 * rule it was made from. *@out (free with rl_apply_rule_changes_free()) is
 * empty when the rules are the same. 0 or -ENOMEM.
 */
int rl_apply_rules_diff(const struct rl_ruleset *cur, const struct rl_ruleset *want,
			struct rl_apply_rule_change **out, size_t *n);
void rl_apply_rule_changes_free(struct rl_apply_rule_change *c, size_t n);

/* One changed value of a set: the option's name, the live value and the file's. */
struct rl_apply_change {
	const char *key;
	char old[64], new[64];
};

#define RL_APPLY_MAX_CHANGES 24

struct rl_apply_step {
	const struct rl_apply_iface *want; /* NULL for a detach */
	struct rl_iface ifc;
	enum rl_apply_action action;
	struct rl_config cur; /* RL_APPLY_SET: the live configuration, from slot active */
	__u32 active;
	struct rl_config cfg; /* RL_APPLY_ATTACH, RL_APPLY_SET: what goes live */
	struct rl_apply_change changes[RL_APPLY_MAX_CHANGES];
	int nchanges;
	/* The rules change too (in the attach's or set's own program): how. */
	bool rules;
	struct rl_apply_rule_change *rchanges;
	size_t nrchanges;
};

struct rl_apply_plan {
	struct rl_apply_step *steps;
	size_t n;
};

/*
 * What apply would do, read from the kernel (hold rl_lock() from here to
 * rl_apply_run()); it changes nothing, so it is also all of apply --check
 * and --diff. Fails, -EINVAL with "FILE:LINE: IFACE: KEY: ..." in
 * @err, for an interface that does not exist, an attach option (mode,
 * max-sources, max-sources6) that differs from the live limiter's (they
 * cannot change live), and rules that do not compile against the live ones.
 * With @prune, interfaces attached in this namespace but not in the file are
 * detached. Interfaces with share: are planned after the others, so that what
 * they share is attached first; whether an interface shares a limiter, and
 * which, is an attach option too: it does not change live.
 */
int rl_apply_plan(const struct rl_apply_file *f, bool prune, struct rl_apply_plan *p, char *err,
		  size_t errlen);
/* apply --detach: detach every interface of the file that has the limiter attached. */
int rl_apply_plan_detach(const struct rl_apply_file *f, struct rl_apply_plan *p, char *err,
			 size_t errlen);
void rl_apply_plan_free(struct rl_apply_plan *p);

/*
 * Carry out the plan, in order. Each step is all or nothing, and a killed
 * step leaves its interface as it was or as the file says: an attach or a set
 * with rules makes the policy and the rules live in one program, attached or
 * swapped in once (rl_attach_rules(), rl_set_live_rules()). A failure stops
 * there, with the steps before it done: returns how many were done (negative
 * errno on the first failure, its message in @err, *@done set).
 */
int rl_apply_run(struct rl_apply_plan *p, size_t *done, char *err, size_t errlen);

const char *rl_apply_action_name(enum rl_apply_action a);

#endif /* RL_APPLY_H */
