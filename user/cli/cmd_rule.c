// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rule add/del/list, blocked, unblock: the rules of a running limiter (see
 * user/lib/rulemaps.h for how a change is made live).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "synproxy.h"
#include "env.h"
#include "json_writer.h"
#include "lock.h"
#include "maps.h"
#include "pins.h"
#include "prog.h"
#include "rl_block.h"
#include "rulemaps.h"
#include "rules.h"
#include "source.h"
#include "xdp_attach.h"

/* A limiter opened for a rule command: its interface, the lock, its maps, its rules. */
struct rule_target {
	struct rl_iface ifc;
	struct rl_pins pins;
	struct rl_config def;
	struct rl_rules_cfg cfg;
	struct rl_ruleset set;
	int lock;
	bool pins_open, has_set;
};

static void target_close(struct rule_target *l)
{
	if (l->has_set)
		rl_ruleset_free(&l->set);
	if (l->pins_open)
		rl_pins_close(&l->pins);
	if (l->lock >= 0)
		rl_unlock(l->lock);
}

/* Open the limiter on @name and read its rules (with their prefixes if @set). */
static int target_read(struct rule_target *l, const char *name, bool set, char *err, size_t errlen)
{
	__u32 active;
	int ret;

	memset(l, 0, sizeof(*l));
	l->lock = -1;
	ret = rl_check_env(err, errlen);
	if (!ret)
		ret = rl_iface_get(name, &l->ifc, err, errlen);
	if (ret)
		return ret;
	l->lock = rl_lock(err, errlen);
	if (l->lock < 0)
		return l->lock;
	ret = rl_pins_open(&l->ifc, &l->pins, err, errlen);
	if (ret)
		return ret;
	l->pins_open = true;
	ret = rl_config_read(&l->pins, &l->def, &active);
	if (!ret)
		ret = rl_rules_read(&l->pins, &l->cfg);
	if (ret) {
		snprintf(err, errlen, "couldn't read the configuration of '%s': %s", l->ifc.name,
			 strerror(-ret));
		return ret;
	}
	if (!set)
		return 0;
	ret = rl_rules_load(&l->pins, &l->cfg, &l->def, &l->set, err, errlen);
	if (!ret)
		l->has_set = true;
	return ret;
}

/* target_read(), and on failure: the message printed, everything closed. */
static int target_open(struct rule_target *l, const char *name, bool set)
{
	char err[RL_ERRLEN] = "";
	int ret = target_read(l, name, set, err, sizeof(err));

	if (ret) {
		pr_err("%s", err);
		target_close(l);
	}
	return ret;
}

/* Make l->set live (rl_rules_make_live()); l->cfg follows. */
static int target_apply(struct rule_target *l, char *err, size_t errlen)
{
	struct rl_rules_cfg cfg;
	int ret;

	ret = rl_rules_make_live(&l->ifc, &l->pins, &l->def, &l->cfg, &l->set, &cfg, err, errlen);
	if (ret >= 0)
		l->cfg = cfg;
	return ret;
}

/* The names of the rules of @set, in order, default last: "web, ssh, default". */
static void rule_names(const struct rl_ruleset *set, struct rl_json *w)
{
	if (w) {
		jw_name(w, "rules");
		jw_start_array(w);
	}
	for (size_t i = 0; i < set->n; i++) {
		if (w)
			jw_string(w, set->rules[i].name);
		else
			printf("%s%s", i ? ", " : "", set->rules[i].name);
	}
	if (w)
		jw_end_array(w);
}

/*
 * What a rule command did, in one line: "added rule 'web' on eth0: web
 * --proto tcp ... (rules now: web, default)", or an object with --json:
 * {"iface", "result": "added"|"deleted", "rule": the rule added (as rule list
 * --json) or the name deleted, "rules": the names now, in order}.
 */
static int report(const struct rl_args *a, const struct rule_target *l, bool added,
		  const char *name)
{
	int i = rl_ruleset_find(&l->set, name);
	char *text = NULL;
	struct rl_json w;
	size_t need;

	if (a->json) {
		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_string_field(&w, "iface", l->ifc.name);
		jw_string_field(&w, "result", added ? "added" : "deleted");
		if (added && i >= 0) {
			jw_name(&w, "rule");
			rl_rule_json(&w, &l->set.rules[i]);
		} else {
			jw_string_field(&w, "rule", name);
		}
		rule_names(&l->set, &w);
		jw_end_object(&w);
		jw_end(&w);
		return 0;
	}
	if (added && i >= 0) {
		need = rl_rule_format(&l->set.rules[i], NULL, 0) + 1;
		text = malloc(need);
		if (text)
			rl_rule_format(&l->set.rules[i], text, need);
	}
	if (added)
		printf("added rule '%s' on %s: %s (rules now: ", name, l->ifc.name,
		       text ? text : name);
	else
		printf("deleted rule '%s' from %s (rules now: ", name, l->ifc.name);
	rule_names(&l->set, NULL);
	printf(")\n");
	free(text);
	return 0;
}

/*
 * Make l->set live, say what was done (rule @name @added or deleted) and
 * close: 0 done, 1 nothing changed (@what names the command).
 */
static int target_commit(const struct rl_args *a, struct rule_target *l, const char *what,
			 bool added, const char *name)
{
	char err[RL_ERRLEN] = "";
	int ret = target_apply(l, err, sizeof(err));

	if (ret < 0)
		pr_err("%s: %s", what, err);
	else if (ret)
		pr_warn("%s: %s", what, err);
	if (ret >= 0)
		report(a, l, added, name);
	target_close(l);
	return ret < 0;
}

/*
 * rule add IFACE NAME [RULE OPTIONS]: parsed by rl_cmd_run() with the rule's
 * options into a->rule, which is the command's to take (rl_cmd_run() frees
 * what it leaves).
 */
static int cmd_rule_add(const struct rl_args *a)
{
	const char *before = NULL, *about = NULL;
	char err[RL_ERRLEN] = "";
	struct rule_target l;
	bool syn;
	int ret;

	if (a->npos < 2) {
		pr_err("rule add: give an interface and a rule name (see " RL_PROG " rule --help)");
		return 2;
	}
	syn = a->syn_rule;
	/* The rule first: a bad one is refused before the limiter is looked at. */
	ret = rl_rule_from_args(a->rule, a->pos[1], a, &before, &about, err, sizeof(err));
	if (ret) {
		if (about)
			rl_about_cli(err, sizeof(err), about);
		pr_err("rule add: %s", err);
		return 2;
	}
	if (target_open(&l, a->pos[0], true))
		return 1;
	ret = rl_ruleset_add(&l.set, a->rule, before, err, sizeof(err));
	if (ret) {
		pr_err("rule add: %s", err);
		target_close(&l);
		return 1;
	}
	ret = target_commit(a, &l, "rule add", true, a->pos[1]);
	/*
	 * A syn-cookies rule's ports are the rule's match: the stack's half is
	 * the user's to set up (attach --syn-cookies makes it for its ports).
	 */
	if (!ret && syn && rl_synproxy_check(NULL, err, sizeof(err)))
		pr_warn("rule add: %s", err);
	return ret;
}

static int cmd_rule_del(const struct rl_args *a)
{
	char err[RL_ERRLEN] = "";
	struct rule_target l;
	int ret;

	if (a->npos != 2) {
		pr_err("rule del: give an interface and a rule name (see " RL_PROG " rule --help)");
		return 2;
	}
	if (target_open(&l, a->pos[0], true))
		return 1;
	ret = rl_ruleset_del(&l.set, a->pos[1], err, sizeof(err));
	if (ret) {
		pr_err("rule del: %s", err);
		target_close(&l);
		return 1;
	}
	return target_commit(a, &l, "rule del", false, a->pos[1]);
}

static int cmd_rule_list(const struct rl_args *a)
{
	char *buf = NULL;
	struct rl_json w;
	struct rule_target l;

	if (a->npos != 1) {
		pr_err("rule list: give one interface (see " RL_PROG " rule --help)");
		return 2;
	}
	if (target_open(&l, a->pos[0], true))
		return 1;
	if (a->json) {
		jw_init(&w, stdout);
		jw_start_array(&w);
		for (size_t i = 0; i < l.set.n; i++)
			rl_rule_json(&w, &l.set.rules[i]);
		jw_end_array(&w);
		jw_end(&w);
	} else {
		for (size_t i = 0; i < l.set.n; i++) {
			size_t need = rl_rule_format(&l.set.rules[i], NULL, 0) + 1;

			buf = malloc(need);
			if (!buf) {
				pr_err("rule list: out of memory");
				target_close(&l);
				return 1;
			}
			rl_rule_format(&l.set.rules[i], buf, need);
			printf("%s\n", buf);
			free(buf);
		}
	}
	target_close(&l);
	return 0;
}

/*
 * rule's subcommands (rl_cmds[]'s rule row points here). Their --help is
 * rule's; a synopsis is what follows "xdp-ratelimit rule NAME". Each checks
 * its words itself, for its message.
 */
const struct rl_cmd rl_rule_cmds[] = {
	{ "add", cmd_rule_add, NULL, RL_G_JSON | RL_G_RULE | RL_G_POLICY | RL_G_LIMITER, 0, 2,
	  "IFACE NAME [--src CIDR[,CIDR...]] [--src-file FILE] [--proto PROTO] "
	  "[--dport N|N-M] [--tcp-flags FLAGS] (--allow | --deny | --rate RATE [POLICY OPTIONS] "
	  "[--action dry-run] [--block DUR]) [--before RULE]",
	  "add a rule", "" },
	{ "del", cmd_rule_del, NULL, RL_G_JSON, 0, 2, "IFACE RULE", "delete a rule", "" },
	{ "list", cmd_rule_list, NULL, RL_G_JSON, 0, 2, "IFACE [--json]", "list the rules", "" },
	{ NULL },
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The rule of a state key, or NULL (a rule deleted since). */
static const struct rl_krule *key_rule(const struct rl_rules_cfg *cfg,
				       const struct rl_rstate_key *k)
{
	for (__u32 i = 0; i < cfg->n; i++)
		if (cfg->r[i].slot == k->slot && cfg->r[i].gen == k->gen)
			return &cfg->r[i];
	return NULL;
}

/* The packet clock: bpf_ktime_get_ns() is CLOCK_MONOTONIC, the coarse one its _COARSE. */
static __u64 packet_clock(__u32 clock)
{
	struct timespec ts;
	__u64 now = clock == RL_CLOCK_COARSE ? 0 : mono_ns();

	if (!now) {
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	}
	return now;
}

int rl_rule_states_lookup(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u32 clock,
			  const struct rl_rstate_key *keys, size_t n, rl_rule_state_fn fn,
			  void *ctx)
{
	struct rl_block_state s;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		const struct rl_krule *r = key_rule(cfg, &keys[i]);

		if (!r || bpf_map_lookup_elem(pins->rstate, &keys[i], &s))
			continue;
		/* The clock after the state, never older than it (see rl_state_walk()). */
		ret = fn(&keys[i], r, &s, packet_clock(clock), ctx);
	}
	return ret;
}

int rl_rule_states_walk(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u32 clock,
			__u64 max, __u64 *read, rl_rule_state_fn fn, void *ctx)
{
	struct rl_rstate_key k, next, *keys = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;
	int ret;

	while ((!max || n < max) && !bpf_map_get_next_key(pins->rstate, prev, &next)) {
		k = next;
		prev = &k;
		if (n == cap) {
			struct rl_rstate_key *p =
				realloc(keys, (cap = cap ? 2 * cap : 64) * sizeof(*p));

			if (!p) {
				free(keys);
				return -ENOMEM;
			}
			keys = p;
		}
		keys[n++] = k;
	}
	if (read)
		*read += n;
	ret = rl_rule_states_lookup(pins, cfg, clock, keys, n, fn, ctx);
	free(keys);
	return ret;
}

/*
 * Every blocked source: @fn(key, its rule, ns left) for each. A walk of
 * rl_rstate; keys are collected first so that @fn may delete.
 */
typedef int (*blocked_fn)(const struct rl_rstate_key *k, const struct rl_krule *r, __u64 left,
			  void *ctx);

struct blocked_walk {
	blocked_fn fn;
	void *ctx;
};

static int blocked_one(const struct rl_rstate_key *k, const struct rl_krule *r,
		       const struct rl_block_state *s, __u64 now, void *ctx)
{
	struct blocked_walk *b = ctx;

	return s->until > now ? b->fn(k, r, s->until - now, b->ctx) : 0;
}

static int blocked_walk(const struct rl_pins *pins, const struct rl_rules_cfg *cfg, __u32 clock,
			blocked_fn fn, void *ctx)
{
	struct blocked_walk b = { fn, ctx };

	return rl_rule_states_walk(pins, cfg, clock, 0, NULL, blocked_one, &b);
}

struct blocked_out {
	struct rl_json *w;
	unsigned long n;
	const char *title; /* of the first column: SOURCE, or BLOCKED after top's table */
};

static int print_blocked(const struct rl_rstate_key *k, const struct rl_krule *r, __u64 left,
			 void *ctx)
{
	struct blocked_out *o = ctx;
	char src[64];

	rl_key_str(&k->src, r->cfg.prefix4, r->cfg.prefix6, src, sizeof(src));
	if (o->w) {
		jw_start_object(o->w);
		jw_string_field(o->w, "source", src);
		jw_string_field(o->w, "rule", r->name);
		jw_uint_field(o->w, "left_ns", left);
		jw_end_object(o->w);
	} else {
		if (!o->n)
			printf("%s%-40s %-31s %s\n", o->title ? "\n" : "",
			       o->title ? o->title : "SOURCE", "RULE", "LEFT");
		printf("%-40s %-31s %.3fs\n", src, r->name, left / 1e9);
	}
	o->n++;
	return 0;
}

static int blocked_view(const struct rl_args *a, void *ctx)
{
	struct blocked_out o = {};
	struct rl_json w;
	struct rule_target l;
	int ret;

	(void)ctx;
	if (target_open(&l, a->pos[0], false))
		return 1;
	if (a->json) {
		o.w = &w;
		jw_init(&w, stdout);
		jw_start_array(&w);
	}
	ret = blocked_walk(&l.pins, &l.cfg, l.def.clock, print_blocked, &o);
	if (a->json) {
		jw_end_array(&w);
		jw_end(&w);
	} else if (!o.n && !ret) {
		printf("no source is blocked on %s\n", l.ifc.name);
	}
	target_close(&l);
	if (ret) {
		pr_err("blocked: %s", strerror(-ret));
		return 1;
	}
	return 0;
}

int cmd_blocked(const struct rl_args *a)
{
	return rl_watch_views("blocked", a, blocked_view, NULL);
}

struct unblock_ctx {
	const struct rule_target *l;
	struct rl_key addr;
	unsigned long n;
	int err;
};

/* A blocked source that holds ADDR (its key is ADDR masked by its rule's prefixes): forget it. */
static int unblock_one(const struct rl_rstate_key *k, const struct rl_krule *r, __u64 left,
		       void *ctx)
{
	struct unblock_ctx *u = ctx;
	struct rl_key m = u->addr;

	(void)left;
	rl_key_mask(&m, r->cfg.prefix4, r->cfg.prefix6);
	if (memcmp(&m, &k->src, sizeof(m)))
		return 0;
	/* Deleted: its next packet starts afresh, as after the block. */
	if (bpf_map_delete_elem(u->l->pins.rstate, k) && errno != ENOENT)
		u->err = -errno;
	else
		u->n++;
	return 0;
}

int cmd_unblock(const struct rl_args *a)
{
	struct unblock_ctx u = {};
	struct rule_target l;
	int ret;

	if (a->npos != 2) {
		pr_err("unblock: give an interface and an address (see " RL_PROG
		       " unblock --help)");
		return 2;
	}
	if (rl_key_parse(a->pos[1], &u.addr)) {
		pr_err("unblock: '%s' is not an IPv4 or IPv6 address", a->pos[1]);
		return 2;
	}
	if (target_open(&l, a->pos[0], false))
		return 1;
	u.l = &l;
	ret = blocked_walk(&l.pins, &l.cfg, l.def.clock, unblock_one, &u);
	if (!ret)
		ret = u.err;
	target_close(&l);
	if (ret) {
		pr_err("unblock: %s", strerror(-ret));
		return 1;
	}
	if (!u.n) {
		pr_err("unblock: %s is not blocked on %s", a->pos[1], a->pos[0]);
		return 1;
	}
	if (a->json) {
		struct rl_json w;

		jw_init(&w, stdout);
		jw_start_object(&w);
		jw_uint_field(&w, "unblocked", u.n);
		jw_end_object(&w);
		jw_end(&w);
	} else {
		printf("unblocked %s (%lu rule state%s)\n", a->pos[1], u.n, u.n == 1 ? "" : "s");
	}
	return 0;
}

int rl_blocked_show(const struct rl_pins *pins, const struct rl_config *def, __u64 max,
		    struct rl_json *w)
{
	struct blocked_out o = { .w = w, .title = "BLOCKED" };
	struct blocked_walk b = { print_blocked, &o };
	struct rl_rules_cfg cfg;
	bool blocks = false;
	int ret = rl_rules_read(pins, &cfg);

	if (ret || !cfg.n)
		return ret;
	for (__u32 i = 0; i < cfg.n; i++)
		blocks |= cfg.r[i].action == RL_RULE_LIMIT && cfg.r[i].block_ns;
	if (w) {
		jw_name(w, "blocked");
		jw_start_array(w);
	}
	/* No rule blocks: no source can be blocked, nothing to read. */
	if (blocks)
		ret = rl_rule_states_walk(pins, &cfg, def->clock, max, NULL, blocked_one, &b);
	if (w)
		jw_end_array(w);
	return ret;
}
