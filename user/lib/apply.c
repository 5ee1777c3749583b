// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * apply FILE: the configuration file's loader, and the plan that makes the
 * kernel match it. The loader reads libyaml's events (not yaml_parser_load(),
 * which has no bound on depth or size) into a document, a tree of nodes, each
 * with its line, refusing on the way what no valid file holds: more depth,
 * keys or nodes than the limits below, a second document. Every key is then
 * looked up in the option table and given its value through the table's
 * parser (rl_opt_find(), rl_opt_give()), a rule's keys into the rule being
 * read, which rl_rule_from_args() then checks as a whole: a file accepts
 * exactly what the command line does, with the same messages, which the
 * loader prefixes with FILE:LINE and the key.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>
#include "apply.h"
#include "live.h"
#include "log.h"
#include "maps.h"
#include "opts.h"
#include "rulemaps.h"
#include "synproxy.h"
#include "textfile.h"
#include "xdp_attach.h"

/* The options an interface's mapping takes, besides "rules". */
#define IFACE_GROUPS (RL_G_POLICY | RL_G_LIMITER | RL_G_ATTACH | RL_G_SYN)
/* The options a rule's mapping takes, besides "name"; --before is refused (order is the list's). */
#define RULE_GROUPS (RL_G_RULE | RL_G_POLICY | RL_G_LIMITER)
/* The keys besides options, for "did you mean": a rule's, an interface's, the top level's. */
static const char *const rule_keys[] = { "name", NULL };
static const char *const iface_keys[] = { "rules", NULL };
static const char *const top_keys[] = { "interfaces", NULL };
/* The table stores a mode as its choice's index (opts.c), which rl_attach() takes as the enum. */
_Static_assert(RL_MODE_NATIVE == 0 && RL_MODE_SKB == 1, "mode: the choice's index is enum rl_mode");

/*
 * Limits of the file, far above what a valid one needs, so that a hostile or
 * careless file is refused within a bounded time and memory, before anything
 * else is done. The size: the example is 4 KiB, a file of MAX_IFACES
 * interfaces with a few rules each under 2 MiB; a long source list belongs
 * in a src-file:, which has its own limit.
 */
#define MAX_FILE (16 << 20)
/* The format nests 6 deep: the file, interfaces:, an interface, rules:, a rule, its src: list. */
#define MAX_DEPTH 32
/*
 * Interfaces of one file: each is an attach of its own (a program, its maps)
 * that the plan reads back from the kernel one by one; a host with more is
 * not configured in one apply. No other mapping of the format comes near it
 * (a rule takes fewer than 64 keys), so it bounds every mapping's keys too.
 */
#define MAX_IFACES 4096
#define MAX_KEYS   MAX_IFACES
/*
 * Nodes of the document, an alias counted as the nodes it stands for (a
 * "billion laughs" file of aliases of aliases stays small on disk and is
 * refused here): room for a src: list of a quarter of RL_MAX_PREFIXES, and
 * the document's memory stays under ~100 MiB.
 */
#define MAX_NODES (RL_MAX_PREFIXES / 4)
/* Anchors (&name): a file shares a few blocks of options; found by a linear search. */
#define MAX_ANCHORS 256

struct loader {
	const char *path;
	yaml_document_t *doc;
	char *err;
	size_t errlen;
};

/* "FILE:LINE: message" into the loader's error; -EINVAL. @line is 1-based. */
static int vfail_line(struct loader *l, unsigned long line, const char *fmt, va_list ap)
{
	char msg[RL_ERRLEN];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(l->err, l->errlen, "%s:%lu: %s", l->path, line, msg);
	return -EINVAL;
}

__attribute__((format(printf, 3, 4))) static int fail(struct loader *l, const yaml_node_t *at,
						      const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail_line(l, at ? (unsigned long)at->start_mark.line + 1 : 1UL, fmt, ap);
	va_end(ap);
	return ret;
}

static yaml_node_t *node(struct loader *l, int id)
{
	return yaml_document_get_node(l->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* YAML's null: nothing, "~" or "null" written plainly. */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return !n || (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		      (!*s || !strcmp(s, "~") || !strcmp(s, "null")));
}

/* A key of a mapping and its place, for check_keys()'s sort. */
struct key_at {
	const char *s;
	size_t i;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key_at *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/*
 * A mapping's keys must be scalars, each at most once. Sorted, not compared
 * pair by pair: a mapping may hold MAX_KEYS keys. The duplicate reported is
 * the first in the file's order, with the line of the key it repeats.
 */
static int check_keys(struct loader *l, const yaml_node_t *map, const char *where)
{
	const yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t n = (size_t)(map->data.mapping.pairs.top - pairs), dup = n, first = 0;
	struct key_at *k;

	for (size_t i = 0; i < n; i++)
		if (!scalar(node(l, pairs[i].key)))
			return fail(l, node(l, pairs[i].key), "%s: a key must be a plain word",
				    where);
	if (n < 2)
		return 0;
	k = malloc(n * sizeof(*k));
	if (!k) {
		snprintf(l->err, l->errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct key_at){ scalar(node(l, pairs[i].key)), i };
	qsort(k, n, sizeof(*k), key_cmp);
	/* In a run of equal keys, the second is the first repetition of the run's first. */
	for (size_t i = 1; i < n; i++)
		if (!strcmp(k[i].s, k[i - 1].s) && (i < 2 || strcmp(k[i - 1].s, k[i - 2].s)) &&
		    k[i].i < dup) {
			dup = k[i].i;
			first = k[i - 1].i;
		}
	free(k);
	if (dup == n)
		return 0;
	return fail(l, node(l, pairs[dup].key), "%s: '%s' is given twice (first on line %lu)",
		    where, scalar(node(l, pairs[dup].key)),
		    (unsigned long)node(l, pairs[first].key)->start_mark.line + 1);
}

/*
 * " (did you mean 'burst'?)" for an unknown @key, from the options of @groups
 * and the words of @extra valid where it is; "" if none is near.
 */
static const char *did_you_mean(char *buf, size_t len, const char *key, unsigned int groups,
				const char *const *extra)
{
	const char *near = rl_opt_suggest(key, groups, extra);

	/* A rule's "before" is an option, but not a key: the list's order is the rules'. */
	if (!near || (groups == RULE_GROUPS && !strcmp(near, "before")))
		return "";
	snprintf(buf, len, " (did you mean '%s'?)", near);
	return buf;
}

/* A true/false value (YAML 1.1's words for them too). 1, 0, or -1. */
static int boolean(const char *s)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "on", "On", NULL };
	static const char *const no[] = {
		"false", "False", "FALSE", "no", "No", "off", "Off", NULL
	};

	for (int i = 0; yes[i]; i++)
		if (!strcmp(s, yes[i]))
			return 1;
	for (int i = 0; no[i]; i++)
		if (!strcmp(s, no[i]))
			return 0;
	return -1;
}

/* The key of @map named @name, or NULL. */
static const yaml_node_t *key_node(struct loader *l, const yaml_node_t *map, const char *name)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++)
		if (!strcmp(scalar(node(l, p->key)), name))
			return node(l, p->key);
	return NULL;
}

/*
 * Give @o the value of one key of a rule: a flag's true, each item of a
 * list, or the scalar, as the words --NAME [VALUE] would on the command
 * line. An empty list is the option given its empty list: src: [] is --src
 * none, src-file: [] is --src-file '' (refused: no file of that name).
 */
static int give_rule_key(struct loader *l, struct rl_args *a, const struct rl_opt *o,
			 const yaml_node_t *v, char *msg, size_t msglen)
{
	int ret = 0;

	if (o->type == RL_OPT_FLAG)
		return boolean(scalar(v)) ? rl_opt_give(a, o, NULL, msg, msglen) : 0;
	if (o->type != RL_OPT_LIST || v->type != YAML_SEQUENCE_NODE)
		return rl_opt_give(a, o, scalar(v), msg, msglen);
	if (v->data.sequence.items.top == v->data.sequence.items.start)
		return rl_opt_give(a, o, !strcmp(o->name, "src") ? RL_SRC_NONE : "", msg, msglen);
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     !ret && i < v->data.sequence.items.top; i++)
		ret = rl_opt_give(a, o, scalar(node(l, *i)), msg, msglen);
	return ret;
}

/*
 * One rule: a mapping with "name" and rule options; added to ifc->rules.
 * Its keys are checked first (each an option of a rule, a flag true or
 * false, a list of words), then given to the option table in the file's
 * order, then the rule is checked as a whole, as rule add does with its
 * words. A message about one option points at its key and names it as the
 * key, its value's as "KEY: ...".
 */
static int load_rule(struct loader *l, struct rl_apply_iface *ifc, const yaml_node_t *map)
{
	char where[64], msg[RL_ERRLEN];
	const yaml_node_t *at;
	const char *name = NULL, *about;
	struct rl_rule r;
	struct rl_args a;
	int ret;

	snprintf(where, sizeof(where), "%s: rules", ifc->name);
	if (map->type != YAML_MAPPING_NODE)
		return fail(l, map, "%s: a rule is a mapping of name and rule options", where);
	ret = check_keys(l, map, where);
	if (ret)
		return ret;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++)
		if (!strcmp(scalar(node(l, p->key)), "name"))
			name = scalar(node(l, p->value));
	if (!name || !*name)
		return fail(l, map, "%s: a rule needs a name (name: NAME)", where);
	snprintf(where, sizeof(where), "%s: rule %s", ifc->name, name);
	if (!rl_rule_name_ok(name))
		return fail(
			l, map,
			"%s: name: may hold only letters, digits, '_', '.' and '-' (not first), "
			"at most %d",
			where, RL_RULE_NAME_LEN - 1);
	if (rl_ruleset_find(&ifc->rules, name) >= 0)
		return fail(l, map, "%s: a rule of that name comes before", where);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
		const char *key = scalar(k);
		const struct rl_opt *o;

		if (!strcmp(key, "name"))
			continue;
		o = rl_opt_find(key, RULE_GROUPS);
		if (!o || !strcmp(key, "before"))
			return fail(
				l, k, "%s: unknown key '%s'%s", where, key,
				o ? " (the order of the list is the rules' order)" :
				    did_you_mean(msg, sizeof(msg), key, RULE_GROUPS, rule_keys));
		if (o->type == RL_OPT_FLAG) {
			if (!scalar(v) || boolean(scalar(v)) < 0)
				return fail(l, v, "%s: %s: give true or false", where, key);
		} else if (o->type == RL_OPT_LIST && v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *i = v->data.sequence.items.start;
			     i < v->data.sequence.items.top; i++)
				if (!scalar(node(l, *i)))
					return fail(l, node(l, *i), "%s: %s: a list of words",
						    where, key);
		} else if (!scalar(v) || is_null(v)) {
			return fail(l, v ? v : k, "%s: %s needs a value", where, key);
		}
	}
	rl_args_defaults(&a);
	rl_rule_init(&r);
	a.rule = &r;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node(l, p->key);
		const char *key = scalar(k);

		if (!strcmp(key, "name"))
			continue;
		ret = give_rule_key(l, &a, rl_opt_find(key, RULE_GROUPS), node(l, p->value), msg,
				    sizeof(msg));
		if (ret) {
			rl_rule_free(&r);
			return fail(l, k, "%s: %s: %s", where, key, msg);
		}
	}
	ret = rl_rule_from_args(&r, name, &a, NULL, &about, msg, sizeof(msg));
	if (ret == -ENOMEM) {
		snprintf(l->err, l->errlen, "out of memory");
		return ret;
	}
	if (ret) {
		/*
		 * About an option of the file: at its key, named as the key. About
		 * one it does not give (a default's fault) or none: at the rule,
		 * named as the flag.
		 */
		at = about ? key_node(l, map, about) : NULL;
		if (at)
			return fail(l, at, "%s: %s%s", where, about, msg);
		if (about)
			rl_about_cli(msg, sizeof(msg), about);
		return fail(l, map, "%s: %s", where, msg);
	}
	ret = rl_ruleset_add(&ifc->rules, &r, NULL, msg, sizeof(msg));
	if (ret) {
		rl_rule_free(&r);
		return fail(l, map, "%s: %s", where, msg);
	}
	ifc->nrules++;
	return 0;
}

/*
 * An interface's mapping @map; @k is its name's node (interfaces: eth0:), or
 * for a policy alone (rl_apply_load_policy()) the mapping itself, with
 * @name what messages call it.
 */
static int load_iface(struct loader *l, struct rl_apply_iface *ifc, const yaml_node_t *k,
		      const char *name, const yaml_node_t *map)
{
	const yaml_node_t *rules = NULL, *rules_k = NULL, *share = NULL, *other = NULL;
	char msg[RL_ERRLEN], enc[RL_PINNAME_MAX];
	bool max6_given = false;
	struct rl_args a;
	int ret;

	if (strlen(name) >= IF_NAMESIZE || rl_pin_encode(name, enc, sizeof(enc)))
		return fail(l, k, "'%s' is not an interface name", name);
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ifc->line = k->start_mark.line + 1;
	rl_args_defaults(&a);
	if (!is_null(map)) {
		if (map->type != YAML_MAPPING_NODE)
			return fail(l, map, "%s: give a mapping of options (rate: 1000, ...)",
				    ifc->name);
		ret = check_keys(l, map, ifc->name);
		if (ret)
			return ret;
		for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
		     p < map->data.mapping.pairs.top; p++) {
			const yaml_node_t *kn = node(l, p->key), *v = node(l, p->value);
			const char *key = scalar(kn);
			const struct rl_opt *o;

			if (!strcmp(key, "rules")) {
				rules = v;
				rules_k = kn;
				ifc->rules_line = kn->start_mark.line + 1;
				continue;
			}
			o = rl_opt_find(key, IFACE_GROUPS);
			if (!o) {
				o = rl_opt_find(key, RL_G_RULE);
				return fail(l, kn, "%s: unknown key '%s'%s", ifc->name, key,
					    o ? " (a rule's option: put it in a rule of rules:)" :
						did_you_mean(msg, sizeof(msg), key, IFACE_GROUPS,
							     iface_keys));
			}
			if (is_null(v))
				return fail(l, v ? v : kn, "%s: %s needs a value", ifc->name, key);
			if (!scalar(v))
				return fail(l, v, "%s: %s takes one value", ifc->name, key);
			ret = rl_opt_give(&a, o, scalar(v), msg, sizeof(msg));
			if (ret)
				return fail(l, v, "%s: %s: %s", ifc->name, key, msg);
			max6_given |= !strcmp(key, "max-sources6");
			if (!strcmp(key, "share"))
				share = v;
			else if (strcmp(key, "mode") && !other)
				other = kn;
		}
	}
	if (share) {
		/* As attach --share: what is shared comes with its policy, options and rules. */
		if (!other && rules && !is_null(rules))
			other = rules_k;
		if (other)
			return fail(l, other,
				    "%s: %s: the policy, options and rules of a shared limiter are "
				    "those of '%s' (share:): give only share and mode",
				    ifc->name, scalar(other), a.share);
		if (strlen(a.share) >= IF_NAMESIZE || rl_pin_encode(a.share, enc, sizeof(enc)))
			return fail(l, share, "%s: share: '%s' is not an interface name", ifc->name,
				    a.share);
		snprintf(ifc->share, sizeof(ifc->share), "%s", a.share);
		ifc->share_line = share->start_mark.line + 1;
	}
	ifc->mode = a.mode;
	ifc->max_sources = a.max_sources;
	/* attach's default, so that the file and the live table compare. */
	ifc->max_sources6 = max6_given ? a.max_sources6 : RL_MAX_SOURCES6_FOR(a.max_sources);
	ifc->pol = a.pol;
	ifc->o = a.o;
	if (share)
		return 0; /* no policy of its own */
	if (rl_config_build(&ifc->cfg, &ifc->pol, &ifc->o, NULL, msg, sizeof(msg)))
		return fail(l, k, "%s: %s", ifc->name, msg);
	if (rl_ruleset_init(&ifc->rules, &ifc->pol, &ifc->o, msg, sizeof(msg)))
		return fail(l, k, "%s: %s", ifc->name, msg);
	if (!rules || is_null(rules))
		return 0;
	if (rules->type != YAML_SEQUENCE_NODE)
		return fail(l, rules, "%s: rules: give a list of rules (- name: NAME ...)",
			    ifc->name);
	for (yaml_node_item_t *i = rules->data.sequence.items.start;
	     i < rules->data.sequence.items.top; i++) {
		ret = load_rule(l, ifc, node(l, *i));
		if (ret)
			return ret;
	}
	return 0;
}

/* Each share: names another interface of the file, one with a limiter of its own. */
static int check_shares(struct loader *l, const struct rl_apply_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct rl_apply_iface *w = &f->ifs[i], *t = NULL;
		const char *why = NULL;

		if (!*w->share)
			continue;
		for (size_t j = 0; j < f->n && !t; j++)
			if (!strcmp(f->ifs[j].name, w->share))
				t = &f->ifs[j];
		if (t == w)
			why = "an interface cannot share its own limiter";
		else if (!t)
			why = "not an interface of this file (share: names one with a limiter "
			      "of its own)";
		else if (*t->share)
			why = "shares a limiter itself (share: names the interface whose "
			      "limiter it is)";
		if (why) {
			snprintf(l->err, l->errlen, "%s:%lu: %s: share: '%s': %s", l->path,
				 w->share_line, w->name, w->share, why);
			return -EINVAL;
		}
	}
	return 0;
}

static int load_doc(struct loader *l, struct rl_apply_file *f)
{
	const yaml_node_t *root = yaml_document_get_root_node(l->doc), *ifs = NULL;
	char msg[64];
	int ret;

	if (!root || root->type != YAML_MAPPING_NODE)
		return fail(l, root, "the file is a mapping with the key interfaces:");
	ret = check_keys(l, root, "top level");
	if (ret)
		return ret;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node(l, p->key);

		if (strcmp(scalar(k), "interfaces"))
			return fail(l, k, "unknown key '%s'%s (the file has only interfaces:)",
				    scalar(k),
				    did_you_mean(msg, sizeof(msg), scalar(k), 0, top_keys));
		ifs = node(l, p->value);
	}
	if (!ifs)
		return fail(l, root, "no interfaces: key");
	if (is_null(ifs))
		return 0;
	if (ifs->type != YAML_MAPPING_NODE)
		return fail(l, ifs, "interfaces: a mapping of interface names (eth0: ...)");
	/* A name given twice is the duplicate-key check's: the message names both lines. */
	ret = check_keys(l, ifs, "interfaces");
	if (ret)
		return ret;
	f->ifs = calloc((size_t)(ifs->data.mapping.pairs.top - ifs->data.mapping.pairs.start) + 1,
			sizeof(*f->ifs));
	if (!f->ifs) {
		snprintf(l->err, l->errlen, "out of memory");
		return -ENOMEM;
	}
	for (yaml_node_pair_t *p = ifs->data.mapping.pairs.start; p < ifs->data.mapping.pairs.top;
	     p++) {
		/* Counted first: rl_apply_free() frees a half-built interface's rules too. */
		ret = load_iface(l, &f->ifs[f->n++], node(l, p->key), scalar(node(l, p->key)),
				 node(l, p->value));
		if (ret)
			return ret;
	}
	return check_shares(l, f);
}

/* ---- the document, built from libyaml's events ---- */

struct frame {
	int id; /* the mapping or sequence */
	int key; /* a mapping's key waiting for its value, 0 if none */
	size_t npairs;
	size_t start; /* build.total when it began */
	bool ifaces; /* the mapping of interfaces: */
};

struct build {
	struct loader *l;
	yaml_document_t *doc;
	struct frame stack[MAX_DEPTH];
	int depth;
	size_t total; /* nodes so far, an alias counted as the nodes it stands for */
	size_t *size; /* by node id: the nodes it stands for, 0 while it is open */
	size_t cap;
	struct {
		char *name;
		int id;
	} anchors[MAX_ANCHORS];
	int nanchors;
};

__attribute__((format(printf, 3, 4))) static int bfail(struct build *b, const yaml_mark_t *at,
						       const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vfail_line(b->l, (unsigned long)at->line + 1, fmt, ap);
	va_end(ap);
	return ret;
}

static int bnomem(struct build *b)
{
	snprintf(b->l->err, b->l->errlen, "out of memory");
	return -ENOMEM;
}

/* Record a new node @id (0: libyaml's allocation failed) and its marks. */
static int bnode(struct build *b, int id, const yaml_event_t *e)
{
	yaml_node_t *n;

	if (!id)
		return bnomem(b);
	if ((size_t)id >= b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		size_t *s = realloc(b->size, cap * sizeof(*s));

		if (!s)
			return bnomem(b);
		memset(s + b->cap, 0, (cap - b->cap) * sizeof(*s));
		b->size = s;
		b->cap = cap;
	}
	n = yaml_document_get_node(b->doc, id);
	n->start_mark = e->start_mark;
	n->end_mark = e->end_mark;
	return 0;
}

/* Put @id (new, or an alias's) where the open collection expects it; @n: the nodes it stands for. */
static int bplace(struct build *b, int id, size_t n, const yaml_event_t *e)
{
	struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
	yaml_node_t *c;
	int ok;

	b->total += n;
	if (b->total > MAX_NODES)
		return bfail(b, &e->start_mark,
			     "more than %d nodes (values, keys, list items; an alias counts as "
			     "what it stands for)",
			     MAX_NODES);
	if (!f)
		return 0; /* the root: node 1 */
	c = yaml_document_get_node(b->doc, f->id);
	if (c->type == YAML_SEQUENCE_NODE) {
		ok = yaml_document_append_sequence_item(b->doc, f->id, id);
	} else if (!f->key) {
		if (f->npairs == MAX_KEYS)
			return f->ifaces ? bfail(b, &e->start_mark,
						 "interfaces: more than %d interfaces: a file "
						 "configures at most %d",
						 MAX_IFACES, MAX_IFACES) :
					   bfail(b, &e->start_mark,
						 "more than %d keys in one mapping", MAX_KEYS);
		f->key = id;
		return 0;
	} else {
		ok = yaml_document_append_mapping_pair(b->doc, f->id, f->key, id);
		f->key = 0;
		f->npairs++;
	}
	return ok ? 0 : bnomem(b);
}

static int banchor(struct build *b, const yaml_char_t *anchor, int id, const yaml_event_t *e)
{
	if (!anchor)
		return 0;
	for (int i = 0; i < b->nanchors; i++)
		if (!strcmp(b->anchors[i].name, (const char *)anchor))
			return bfail(b, &e->start_mark, "anchor '&%.40s' is defined twice",
				     (const char *)anchor);
	if (b->nanchors == MAX_ANCHORS)
		return bfail(b, &e->start_mark, "more than %d anchors (&name)", MAX_ANCHORS);
	b->anchors[b->nanchors].name = strdup((const char *)anchor);
	if (!b->anchors[b->nanchors].name)
		return bnomem(b);
	b->anchors[b->nanchors++].id = id;
	return 0;
}

/* The tag a node has: "!" and none are the default. */
static yaml_char_t *btag(yaml_char_t *tag)
{
	return tag && strcmp((const char *)tag, "!") ? tag : NULL;
}

static int bopen(struct build *b, const yaml_event_t *e, bool map)
{
	struct frame *parent = b->depth ? &b->stack[b->depth - 1] : NULL;
	const yaml_node_t *pk;
	yaml_char_t *anchor;
	bool ifaces;
	int id, ret;

	if (b->depth == MAX_DEPTH)
		return bfail(b, &e->start_mark,
			     "nested more than %d deep (the format needs 6 levels)", MAX_DEPTH);
	if (map) {
		id = yaml_document_add_mapping(b->doc, btag(e->data.mapping_start.tag),
					       (yaml_mapping_style_t)e->data.mapping_start.style);
		anchor = e->data.mapping_start.anchor;
	} else {
		id = yaml_document_add_sequence(
			b->doc, btag(e->data.sequence_start.tag),
			(yaml_sequence_style_t)e->data.sequence_start.style);
		anchor = e->data.sequence_start.anchor;
	}
	/* The mapping under the file's key interfaces:, for its own message at MAX_IFACES. */
	pk = parent && parent->key ? yaml_document_get_node(b->doc, parent->key) : NULL;
	ifaces = map && b->depth == 1 && scalar(pk) && !strcmp(scalar(pk), "interfaces");
	ret = bnode(b, id, e);
	if (!ret)
		ret = banchor(b, anchor, id, e);
	if (!ret)
		ret = bplace(b, id, 1, e);
	if (ret)
		return ret;
	b->stack[b->depth] = (struct frame){ .id = id, .start = b->total - 1, .ifaces = ifaces };
	b->depth++;
	return 0;
}

static int bclose(struct build *b, const yaml_event_t *e)
{
	struct frame *f = &b->stack[--b->depth];

	b->size[f->id] = b->total - f->start;
	yaml_document_get_node(b->doc, f->id)->end_mark = e->end_mark;
	return 0;
}

static int bscalar(struct build *b, const yaml_event_t *e)
{
	int id, ret;

	id = yaml_document_add_scalar(b->doc, btag(e->data.scalar.tag), e->data.scalar.value,
				      (int)e->data.scalar.length,
				      (yaml_scalar_style_t)e->data.scalar.style);
	ret = bnode(b, id, e);
	if (!ret)
		b->size[id] = 1;
	if (!ret)
		ret = banchor(b, e->data.scalar.anchor, id, e);
	return ret ?: bplace(b, id, 1, e);
}

static int balias(struct build *b, const yaml_event_t *e)
{
	const char *name = (const char *)e->data.alias.anchor;

	for (int i = 0; i < b->nanchors; i++) {
		int id = b->anchors[i].id;

		if (strcmp(b->anchors[i].name, name))
			continue;
		if (!b->size[id])
			return bfail(b, &e->start_mark, "alias '*%.40s' is inside what it names",
				     name);
		return bplace(b, id, b->size[id], e);
	}
	return bfail(b, &e->start_mark, "alias '*%.40s' names no anchor before it", name);
}

/* libyaml's error, with the line where what it could not finish began (a quote, a bracket). */
static int parse_error(struct loader *l, const yaml_parser_t *p)
{
	char opened[64] = "";

	if (p->context && p->context_mark.line != p->problem_mark.line)
		snprintf(opened, sizeof(opened), " (which began on line %lu)",
			 (unsigned long)p->context_mark.line + 1);
	if (p->error == YAML_MEMORY_ERROR) {
		snprintf(l->err, l->errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(l->err, l->errlen, "%s:%lu: %s%s%s%s", l->path,
		 (unsigned long)p->problem_mark.line + 1, p->context ? p->context : "", opened,
		 p->context ? ": " : "", p->problem ? p->problem : "not YAML");
	return -EINVAL;
}

/*
 * The one document of @text into @doc (initialized, even when this fails):
 * what yaml_parser_load() would build, within the limits.
 */
static int build_doc(struct loader *l, const char *text, size_t len, yaml_document_t *doc)
{
	struct build b = { .l = l, .doc = doc };
	yaml_parser_t parser;
	bool end = false;
	int ndocs = 0, ret = 0;

	memset(doc, 0, sizeof(*doc));
	if (!yaml_document_initialize(doc, NULL, NULL, NULL, 1, 1) ||
	    !yaml_parser_initialize(&parser)) {
		snprintf(l->err, l->errlen, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!ret && !end) {
		yaml_event_t e;

		if (!yaml_parser_parse(&parser, &e)) {
			ret = parse_error(l, &parser);
			break;
		}
		switch (e.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (ndocs++)
				ret = bfail(&b, &e.start_mark,
					    "a second YAML document (---): the file holds one");
			break;
		case YAML_SCALAR_EVENT:
			ret = bscalar(&b, &e);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			ret = bopen(&b, &e, e.type == YAML_MAPPING_START_EVENT);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			ret = bclose(&b, &e);
			break;
		case YAML_ALIAS_EVENT:
			ret = balias(&b, &e);
			break;
		case YAML_STREAM_END_EVENT:
			end = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&e);
	}
	for (int i = 0; i < b.nanchors; i++)
		free(b.anchors[i].name);
	free(b.size);
	yaml_parser_delete(&parser);
	return ret;
}

int rl_apply_load(struct rl_apply_file *f, const char *path, char *err, size_t errlen)
{
	struct loader l = { .path = path, .err = err, .errlen = errlen };
	yaml_document_t doc;
	size_t len;
	char *text;
	int ret;

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	/* Only a regular file: a FIFO without a writer would block here forever. */
	ret = rl_textfile_read(path, MAX_FILE, &text, &len, err, errlen);
	if (ret)
		return ret;
	ret = build_doc(&l, text, len, &doc);
	free(text);
	if (!ret) {
		l.doc = &doc;
		ret = load_doc(&l, f);
	}
	yaml_document_delete(&doc);
	if (ret)
		rl_apply_free(f);
	return ret;
}

/* Is the root of @l's document apply's file (a mapping with interfaces:)? */
static bool is_config(struct loader *l)
{
	const yaml_node_t *root = yaml_document_get_root_node(l->doc);

	return root && root->type == YAML_MAPPING_NODE && key_node(l, root, "interfaces");
}

/* The interface @want of @f (NULL: its only one) into @ifc, taken from @f. */
static int take_iface(struct rl_apply_file *f, const char *want, struct rl_apply_iface *ifc,
		      char *err, size_t errlen)
{
	size_t i = 0, off = 0;
	char names[256] = "";

	if (want) {
		while (i < f->n && strcmp(f->ifs[i].name, want))
			i++;
	} else if (f->n != 1) {
		i = f->n;
	}
	if (i == f->n) {
		for (size_t j = 0; j < f->n && off < sizeof(names); j++)
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
						j ? ", " : "", f->ifs[j].name);
		if (want)
			snprintf(err, errlen, "%s: no interface '%s' (it names %s)", f->path, want,
				 f->n ? names : "none");
		else
			snprintf(err, errlen, "%s: names %s interfaces%s%s: give one as %s:IFACE",
				 f->path, f->n ? "several" : "no", f->n ? " " : "", names, f->path);
		return -EINVAL;
	}
	if (*f->ifs[i].share) {
		snprintf(err, errlen,
			 "%s:%lu: %s: shares the limiter of %s (share:), which has the policy: "
			 "name that one",
			 f->path, f->ifs[i].line, f->ifs[i].name, f->ifs[i].share);
		return -EINVAL;
	}
	*ifc = f->ifs[i];
	/* Its rules are ifc's now: f frees the others. */
	memset(&f->ifs[i].rules, 0, sizeof(f->ifs[i].rules));
	return 0;
}

int rl_apply_load_policy(struct rl_apply_iface *ifc, const char *spec, char *err, size_t errlen)
{
	struct loader l = { .err = err, .errlen = errlen };
	char path[sizeof(((struct rl_apply_file *)0)->path)], *text = NULL, *colon;
	const char *want = NULL;
	struct rl_apply_file f;
	yaml_document_t doc;
	struct stat st;
	size_t len;
	int ret;

	memset(ifc, 0, sizeof(*ifc));
	memset(&f, 0, sizeof(f));
	spec += strspn(spec, " \t");
	if (*spec == '{') {
		/* Inline: messages name the text itself. */
		l.path = spec;
		ret = build_doc(&l, spec, strlen(spec), &doc);
	} else {
		snprintf(path, sizeof(path), "%s", spec);
		/* FILE:IFACE, unless FILE:IFACE is itself a file. */
		colon = strrchr(path, ':');
		if (colon && stat(path, &st)) {
			*colon = '\0';
			want = spec + (colon - path) + 1;
		}
		l.path = path;
		ret = rl_textfile_read(path, MAX_FILE, &text, &len, err, errlen);
		if (ret)
			return ret;
		ret = build_doc(&l, text, len, &doc);
	}
	l.doc = &doc;
	if (!ret && is_config(&l)) {
		snprintf(f.path, sizeof(f.path), "%s", l.path);
		ret = load_doc(&l, &f);
		if (!ret)
			ret = take_iface(&f, want, ifc, err, errlen);
		rl_apply_free(&f);
	} else if (!ret && want) {
		ret = fail(&l, NULL, "not a file of interfaces: (apply's), so :%s names nothing",
			   want);
	} else if (!ret) {
		const yaml_node_t *root = yaml_document_get_root_node(&doc);

		if (!root || root->type != YAML_MAPPING_NODE)
			ret = fail(&l, root,
				   "a policy is a mapping of options (rate: 1000, burst: 100, "
				   "rules: [...]), or apply's file of interfaces:");
		else
			ret = load_iface(&l, ifc, root, "policy", root);
		if (!ret && *ifc->share)
			ret = fail(&l, root, "policy: share: a policy to replay needs its own");
	}
	yaml_document_delete(&doc);
	free(text);
	if (ret && ifc->rules.rules)
		rl_ruleset_free(&ifc->rules);
	return ret;
}

void rl_apply_free(struct rl_apply_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->ifs[i].rules.rules)
			rl_ruleset_free(&f->ifs[i].rules);
	free(f->ifs);
	f->ifs = NULL;
	f->n = 0;
}

/* ---- the plan ---- */

static void change(struct rl_apply_step *s, const char *key, const char *old, const char *new)
{
	struct rl_apply_change *c;

	if (!strcmp(old, new) || s->nchanges == RL_APPLY_MAX_CHANGES)
		return;
	c = &s->changes[s->nchanges++];
	c->key = key;
	snprintf(c->old, sizeof(c->old), "%s", old);
	snprintf(c->new, sizeof(c->new), "%s", new);
}

static void change_u64(struct rl_apply_step *s, const char *key, bool has_old, __u64 old,
		       bool has_new, __u64 new)
{
	char o[32] = "-", n[32] = "-";

	if (has_old)
		snprintf(o, sizeof(o), "%llu", (unsigned long long)old);
	if (has_new)
		snprintf(n, sizeof(n), "%llu", (unsigned long long)new);
	change(s, key, o, n);
}

/* A level's rate as its option takes it: off, or the rate. */
static char *level_rate(const struct rl_level_policy *l, char *buf, size_t len)
{
	struct rl_policy q;

	if (!l->rate_num) {
		snprintf(buf, len, "off");
		return buf;
	}
	rl_policy_defaults(&q);
	q.rate_num = l->rate_num;
	q.rate_den = l->rate_den;
	q.bytes = l->bytes;
	return rl_rate_str(&q, buf, len);
}

static void change_prefix(struct rl_apply_step *s, const char *key, int old, int new)
{
	char o[16] = "off", n[16] = "off";

	if (old >= 0)
		snprintf(o, sizeof(o), "%d", old);
	if (new >= 0)
		snprintf(n, sizeof(n), "%d", new);
	change(s, key, o, n);
}

/* The levels above the source (user/lib/level.h) that a set changes. */
static void level_changes(struct rl_apply_step *s, const struct rl_policy *a,
			  const struct rl_policy *b)
{
	static const char *const rate[] = { "aggregate-rate", "iface-rate", "admit-rate" };
	static const char *const burst[] = { "aggregate-burst", "iface-burst", "admit-burst" };
	const struct rl_level_policy *la[] = { &a->agg, &a->iface, &a->admit };
	const struct rl_level_policy *lb[] = { &b->agg, &b->iface, &b->admit };
	char ra[64], rb[64];

	change_prefix(s, "aggregate4", a->agg_prefix4, b->agg_prefix4);
	change_prefix(s, "aggregate6", a->agg_prefix6, b->agg_prefix6);
	for (int i = 0; i < 3; i++) {
		change(s, rate[i], level_rate(la[i], ra, sizeof(ra)),
		       level_rate(lb[i], rb, sizeof(rb)));
		change_u64(s, burst[i], la[i]->burst_set, la[i]->burst, lb[i]->burst_set,
			   lb[i]->burst);
	}
}

/* What a set changes, by option name, live value -> the file's. */
static void changes(struct rl_apply_step *s)
{
	static const char *const action[] = { "drop", "dry-run" }, *const pd[] = { "pass", "drop" },
				 *const clk[] = { "precise", "coarse" };
	struct rl_policy a, b;
	struct rl_opts ao, bo;
	char ra[64], rb[64];
	bool ab, bb;

	rl_config_policy(&s->cur, &a, &ao);
	rl_config_policy(&s->cfg, &b, &bo);
	ab = a.algo <= RL_ALGO_GCRA;
	bb = b.algo <= RL_ALGO_GCRA;
	change(s, "algo", rl_algo_name(a.algo), rl_algo_name(b.algo));
	change(s, "rate", rl_rate_str(&a, ra, sizeof(ra)), rl_rate_str(&b, rb, sizeof(rb)));
	change_u64(s, "burst", ab, a.burst, bb, b.burst);
	change_u64(s, "initial", ab && a.initial_set, a.initial, bb && b.initial_set, b.initial);
	change_u64(s, "window", !ab, a.window_ns, !bb, b.window_ns);
	change_u64(s, "prefix4", true, a.prefix4, true, b.prefix4);
	change_u64(s, "prefix6", true, a.prefix6, true, b.prefix6);
	change(s, "action", action[ao.action & 1], action[bo.action & 1]);
	change(s, "on-insert-fail", pd[ao.fail_policy & 1], pd[bo.fail_policy & 1]);
	change(s, "malformed", pd[!!ao.malformed_drop], pd[!!bo.malformed_drop]);
	change(s, "clock", clk[ao.clock & 1], clk[bo.clock & 1]);
	level_changes(s, &a, &b);
}

static int plan_fail(const struct rl_apply_file *f, const struct rl_apply_iface *w, char *err,
		     size_t errlen, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int plan_fail(const struct rl_apply_file *f, const struct rl_apply_iface *w, char *err,
		     size_t errlen, const char *fmt, ...)
{
	char msg[RL_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%lu: %s: %s", f->path, w->line, w->name, msg);
	return -EINVAL;
}

/* ---- rules ---- */

/* The rule as the words of rule add, in a buffer of its own (NULL: out of memory). */
static char *rule_str(const struct rl_rule *r)
{
	size_t n = rl_rule_format(r, NULL, 0) + 1;
	char *buf = malloc(n);

	if (buf)
		rl_rule_format(r, buf, n);
	return buf;
}

/* The rules of @s besides "default" (which is last). */
static size_t user_rules(const struct rl_ruleset *s)
{
	return s && s->n ? s->n - 1 : 0;
}

static int rule_index(const struct rl_ruleset *s, size_t n, const char *name)
{
	int i = s ? rl_ruleset_find(s, name) : -1;

	return i >= 0 && (size_t)i < n ? i : -1;
}

static int rchange_add(struct rl_apply_rule_change **c, size_t *n, enum rl_apply_rule_op op,
		       char *old, char *new)
{
	struct rl_apply_rule_change *nc = realloc(*c, (*n + 1) * sizeof(*nc));

	if (!nc) {
		free(old);
		free(new);
		return -ENOMEM;
	}
	*c = nc;
	nc[(*n)++] = (struct rl_apply_rule_change){ .op = op, .old = old, .new = new };
	return 0;
}

/* The names of the rules of @s (of its first @n) that @other has too, in @s's order. */
static char *common_names(const struct rl_ruleset *s, size_t n, const struct rl_ruleset *other,
			  size_t nother)
{
	size_t len = 1;
	char *buf;

	for (size_t i = 0; i < n; i++)
		len += strlen(s->rules[i].name) + 1;
	buf = malloc(len);
	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (rule_index(other, nother, s->rules[i].name) < 0)
			continue;
		if (buf[0])
			strcat(buf, " ");
		strcat(buf, s->rules[i].name);
	}
	return buf;
}

void rl_apply_rule_changes_free(struct rl_apply_rule_change *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].old);
		free(c[i].new);
	}
	free(c);
}

int rl_apply_rules_diff(const struct rl_ruleset *cur, const struct rl_ruleset *want,
			struct rl_apply_rule_change **out, size_t *n)
{
	size_t ncur = user_rules(cur), nwant = user_rules(want);
	char *a = NULL, *b = NULL;
	int ret = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < nwant && !ret; i++) {
		int j = rule_index(cur, ncur, want->rules[i].name);

		a = j < 0 ? NULL : rule_str(&cur->rules[j]);
		b = rule_str(&want->rules[i]);
		if (!b || (j >= 0 && !a)) {
			ret = -ENOMEM;
			break;
		}
		if (j < 0) {
			ret = rchange_add(out, n, RL_APPLY_RULE_ADD, NULL, b);
		} else if (strcmp(a, b)) {
			ret = rchange_add(out, n, RL_APPLY_RULE_CHANGE, a, b);
		} else {
			free(a);
			free(b);
		}
		a = b = NULL;
	}
	for (size_t i = 0; i < ncur && !ret; i++) {
		if (rule_index(want, nwant, cur->rules[i].name) >= 0)
			continue;
		a = rule_str(&cur->rules[i]);
		ret = a ? rchange_add(out, n, RL_APPLY_RULE_DEL, a, NULL) : -ENOMEM;
		a = NULL;
	}
	/* Rules match in order: the same rules in another order are another rule set. */
	if (!ret && ncur && nwant) {
		a = common_names(cur, ncur, want, nwant);
		b = common_names(want, nwant, cur, ncur);
		if (!a || !b)
			ret = -ENOMEM;
		else if (strcmp(a, b)) {
			ret = rchange_add(out, n, RL_APPLY_RULE_ORDER, a, b);
			a = b = NULL; /* the change owns them, or they are freed */
		}
	}
	free(a);
	free(b);
	if (ret) {
		rl_apply_rule_changes_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return ret;
}

/*
 * The rules of the step: what differs from the live ones (read through
 * @pins; NULL: not attached, no rules), and that the file's compile against
 * them, as rl_rules_make_live() will first do, so that this fails before
 * any interface changes.
 */
static int plan_rules(const struct rl_apply_file *f, struct rl_apply_step *s,
		      const struct rl_pins *pins, const struct rl_config *def, char *err,
		      size_t errlen)
{
	const struct rl_apply_iface *w = s->want;
	unsigned long line = w->rules_line ? w->rules_line : w->line;
	struct rl_rules_cfg *old, *out;
	struct rl_ruleset cur = {};
	char msg[RL_ERRLEN];
	int ret = -ENOMEM;

	old = calloc(1, sizeof(*old));
	out = calloc(1, sizeof(*out));
	if (!old || !out) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (pins) {
		ret = rl_rules_read(pins, old);
		if (ret) {
			snprintf(msg, sizeof(msg), "couldn't read the live rules: %s",
				 strerror(-ret));
			goto fail;
		}
		ret = rl_rules_load(pins, old, def, &cur, msg, sizeof(msg));
		if (ret)
			goto fail;
	}
	ret = rl_apply_rules_diff(pins ? &cur : NULL, &w->rules, &s->rchanges, &s->nrchanges);
	if (pins)
		rl_ruleset_free(&cur);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	s->rules = s->nrchanges > 0;
	if (!s->rules)
		goto out;
	ret = rl_rules_compile(&w->rules, old, out, msg, sizeof(msg));
	if (!ret)
		goto out;
fail:
	snprintf(err, errlen, "%s:%lu: %s: rules: %s", f->path, line, w->name, msg);
	ret = ret == -ENOMEM ? ret : -EINVAL;
out:
	free(old);
	free(out);
	return ret;
}

/* An attached limiter: set, or nothing; attach options must match. */
static int plan_live(const struct rl_apply_file *f, struct rl_apply_step *s, char *err,
		     size_t errlen)
{
	const struct rl_apply_iface *w = s->want;
	const char *mode = rl_attach_mode(&s->ifc);
	const char *want_mode = w->mode == RL_MODE_SKB ? "skb" : "native";
	char msg[RL_ERRLEN];
	struct rl_pins pins;
	struct rl_live live;
	int ret;

	if (rl_pins_open(&s->ifc, &pins, msg, sizeof(msg)))
		return plan_fail(f, w, err, errlen, "%s", msg);
	ret = rl_live_read(&s->ifc, &pins, &live, msg, sizeof(msg));
	if (ret) {
		rl_pins_close(&pins);
		return plan_fail(f, w, err, errlen, "%s", msg);
	}
	ret = plan_rules(f, s, &pins, &live.cfg, err, errlen);
	rl_pins_close(&pins);
	if (ret)
		return ret;
	s->cur = live.cfg;
	s->active = live.active;
	/* Attach options size the tables and pick the hook: only a new attach changes them. */
	if (strncmp(mode, want_mode, strlen(want_mode)))
		return plan_fail(f, w, err, errlen,
				 "mode: the limiter runs in %s mode, the file says %s; an attach "
				 "option cannot change live (detach first)",
				 mode, want_mode);
	if (live.max_sources != w->max_sources)
		return plan_fail(f, w, err, errlen,
				 "max-sources: the live table holds %u, the file says %llu; an "
				 "attach option cannot change live (detach first)",
				 live.max_sources, (unsigned long long)w->max_sources);
	if (live.max_sources6 != w->max_sources6)
		return plan_fail(f, w, err, errlen,
				 "max-sources6: the live table holds %u, the file says %llu; an "
				 "attach option cannot change live (detach first)",
				 live.max_sources6, (unsigned long long)w->max_sources6);
	if (rl_config_build(&s->cfg, &w->pol, &w->o, &s->cur, msg, sizeof(msg)))
		return plan_fail(f, w, err, errlen, "%s", msg);
	/* What the SYN-ACK says, from the interface (as set), so that the two compare. */
	if (rl_synproxy_params(s->ifc.name, &s->cfg.syn, msg, sizeof(msg)))
		return plan_fail(f, w, err, errlen, "%s", msg);
	/* The policy in force already: a new generation would only cost a migration. */
	if (rl_config_same(&s->cfg, &s->cur)) {
		s->action = s->rules ? RL_APPLY_RULES : RL_APPLY_NONE;
		return 0;
	}
	s->action = RL_APPLY_SET;
	changes(s);
	return 0;
}

/* The mode @ifc runs in differs from the file's: message, -EINVAL. */
static int plan_mode(const struct rl_apply_file *f, const struct rl_apply_iface *w,
		     const struct rl_iface *ifc, char *err, size_t errlen)
{
	const char *mode = rl_attach_mode(ifc);
	const char *want_mode = w->mode == RL_MODE_SKB ? "skb" : "native";

	if (!strncmp(mode, want_mode, strlen(want_mode)))
		return 0;
	return plan_fail(f, w, err, errlen,
			 "mode: the limiter runs in %s mode, the file says %s; an attach "
			 "option cannot change live (detach first)",
			 mode, want_mode);
}

/* An interface with share: attach it sharing, or check it shares that limiter already. */
static int plan_share(const struct rl_apply_file *f, struct rl_apply_step *s, char *err,
		      size_t errlen)
{
	const struct rl_apply_iface *w = s->want;
	struct rl_iface with;
	char msg[RL_ERRLEN];

	switch (rl_presence(&s->ifc)) {
	case RL_ABSENT:
	case RL_ORPHAN_PROG:
	case RL_STALE_PINS:
		s->action = RL_APPLY_SHARE;
		return 0;
	case RL_PRESENT:
		break;
	case RL_FOREIGN_PINS:
		rl_pins_foreign_msg(&s->ifc, msg, sizeof(msg));
		return plan_fail(f, w, err, errlen, "%s", msg);
	default:
		return plan_fail(f, w, err, errlen, "couldn't tell what is attached: %s",
				 strerror(errno));
	}
	if (rl_iface_get(w->share, &with, msg, sizeof(msg)))
		return plan_fail(f, w, err, errlen, "share: %s", msg);
	if (rl_presence(&with) != RL_PRESENT ||
	    rl_pins_id(with.pindir) != rl_pins_id(s->ifc.pindir))
		return plan_fail(f, w, err, errlen,
				 "share: the limiter attached is not that of '%s'; which limiter "
				 "an interface runs cannot change live (detach it first)",
				 w->share);
	s->action = RL_APPLY_NONE;
	return plan_mode(f, w, &s->ifc, err, errlen);
}

/* A live limiter the file gives to @s alone must not be shared with another interface of it. */
static int plan_alone(const struct rl_apply_file *f, const struct rl_apply_step *s, char *err,
		      size_t errlen)
{
	struct rl_member m[RL_MAX_MEMBERS];
	int n = rl_members(&s->ifc, m, RL_MAX_MEMBERS);

	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < f->n; j++)
			if (m[i].ifindex != s->ifc.ifindex && !*f->ifs[j].share &&
			    !strcmp(f->ifs[j].name, m[i].name))
				return plan_fail(f, s->want, err, errlen,
						 "it shares one limiter with '%s', and the "
						 "file gives each a limiter of its own; which "
						 "limiter an interface runs cannot change live "
						 "(detach '%s' first)",
						 m[i].name, m[i].name);
	return 0;
}

int rl_apply_plan(const struct rl_apply_file *f, bool prune, struct rl_apply_plan *p, char *err,
		  size_t errlen)
{
	char(*names)[IF_NAMESIZE] = NULL;
	int nattached = 0, ret = 0;
	char msg[RL_ERRLEN];

	memset(p, 0, sizeof(*p));
	if (prune) {
		/* Up to 256 limiters in this namespace are found and pruned in one run. */
		names = calloc(256, sizeof(*names));
		if (!names) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		nattached = rl_list_attached(names, 256);
		if (nattached < 0)
			nattached = 0;
	}
	p->steps = calloc(f->n + (size_t)nattached + 1, sizeof(*p->steps));
	if (!p->steps) {
		free(names);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* Interfaces with a limiter of their own first: those that share one come after it. */
	for (size_t k = 0; k < 2 * f->n; k++) {
		const struct rl_apply_iface *w = &f->ifs[k % f->n];
		struct rl_apply_step *s;

		if ((k < f->n) == !!*w->share)
			continue;
		s = &p->steps[p->n++];
		s->want = w;
		if (rl_iface_get(w->name, &s->ifc, msg, sizeof(msg))) {
			ret = plan_fail(f, w, err, errlen, "%s", msg);
			goto fail;
		}
		if (*w->share) {
			ret = plan_share(f, s, err, errlen);
			if (ret)
				goto fail;
			continue;
		}
		switch (rl_presence(&s->ifc)) {
		case RL_ABSENT:
		case RL_ORPHAN_PROG:
		case RL_STALE_PINS:
			/* rl_attach() replaces what a killed command left. */
			s->action = RL_APPLY_ATTACH;
			s->cfg = w->cfg;
			ret = plan_rules(f, s, NULL, NULL, err, errlen);
			if (ret)
				goto fail;
			break;
		case RL_PRESENT:
			ret = plan_live(f, s, err, errlen);
			if (!ret)
				ret = plan_alone(f, s, err, errlen);
			if (ret)
				goto fail;
			break;
		case RL_FOREIGN_PINS:
			rl_pins_foreign_msg(&s->ifc, msg, sizeof(msg));
			ret = plan_fail(f, w, err, errlen, "%s", msg);
			goto fail;
		default:
			ret = plan_fail(f, w, err, errlen, "couldn't tell what is attached: %s",
					strerror(errno));
			goto fail;
		}
	}
	for (int i = 0; i < nattached; i++) {
		struct rl_apply_step *s = &p->steps[p->n];
		bool named = false;

		for (size_t j = 0; j < f->n && !named; j++)
			named = !strcmp(f->ifs[j].name, names[i]);
		/* Pins are per host, interfaces per namespace: only ours, and only live ones. */
		if (named || rl_iface_get(names[i], &s->ifc, msg, sizeof(msg)) ||
		    rl_presence(&s->ifc) != RL_PRESENT)
			continue;
		s->action = RL_APPLY_DETACH;
		p->n++;
	}
	free(names);
	return 0;
fail:
	free(names);
	rl_apply_plan_free(p);
	return ret;
}

int rl_apply_plan_detach(const struct rl_apply_file *f, struct rl_apply_plan *p, char *err,
			 size_t errlen)
{
	char msg[RL_ERRLEN];

	memset(p, 0, sizeof(*p));
	p->steps = calloc(f->n + 1, sizeof(*p->steps));
	if (!p->steps) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n; i++) {
		struct rl_apply_step *s = &p->steps[p->n];

		/* Gone, or not attached: nothing to stop there. */
		if (rl_iface_get(f->ifs[i].name, &s->ifc, msg, sizeof(msg)) ||
		    rl_presence(&s->ifc) != RL_PRESENT)
			continue;
		s->action = RL_APPLY_DETACH;
		p->n++;
	}
	return 0;
}

void rl_apply_plan_free(struct rl_apply_plan *p)
{
	for (size_t i = 0; p->steps && i < p->n; i++)
		rl_apply_rule_changes_free(p->steps[i].rchanges, p->steps[i].nrchanges);
	free(p->steps);
	p->steps = NULL;
	p->n = 0;
}

static int run_set(struct rl_apply_step *s, char *err, size_t errlen)
{
	struct rl_pins pins;
	__u64 moved = 0;
	int ret;

	ret = rl_pins_open(&s->ifc, &pins, err, errlen);
	if (ret)
		return ret;
	/* The policy and the rules in one swap: a kill leaves the old pair or the new one. */
	ret = rl_set_live_rules(&s->ifc, &pins, &s->cfg, s->active,
				s->rules ? &s->want->rules : NULL, &moved, err, errlen);
	rl_pins_close(&pins);
	if (ret > 0) {
		/* The new policy is live; a clean-up step after it failed. */
		pr_warn("%s", err);
		ret = 0;
	}
	if (!ret)
		pr_debug("%s: moved %llu source states to generation %u", s->ifc.name,
			 (unsigned long long)moved, s->cfg.gen);
	return ret;
}

/*
 * The file's rules made live on a limiter whose policy stays, as the rule
 * commands do: rules that stay keep their slot, states and counters; the
 * policy and its generation are untouched. (An attach or a set carries the
 * rules in its own program.)
 */
static int run_rules(struct rl_apply_step *s, char *err, size_t errlen)
{
	struct rl_rules_cfg *old = NULL, *out = NULL;
	char why[RL_ERRLEN];
	struct rl_config def;
	struct rl_pins pins;
	__u32 active;
	int ret;

	ret = rl_pins_open(&s->ifc, &pins, err, errlen);
	if (ret)
		return ret;
	old = malloc(sizeof(*old));
	out = malloc(sizeof(*out));
	if (!old || !out) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ret = rl_config_read(&pins, &def, &active);
	if (!ret)
		ret = rl_rules_read(&pins, old);
	if (ret) {
		snprintf(err, errlen, "couldn't read the configuration of '%s': %s", s->ifc.name,
			 strerror(-ret));
		goto out;
	}
	ret = rl_rules_make_live(&s->ifc, &pins, &def, old, &s->want->rules, out, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, errlen, "%s: rules: %s", s->ifc.name, why);
	} else if (ret > 0) {
		/* The new rules are live; a clean-up step after them failed. */
		pr_warn("%s: rules: %s", s->ifc.name, why);
		ret = 0;
	}
out:
	free(old);
	free(out);
	rl_pins_close(&pins);
	return ret;
}

static int run_converge(struct rl_apply_step *s, char *err, size_t errlen)
{
	struct rl_pins pins;
	int ret;

	ret = rl_pins_open(&s->ifc, &pins, err, errlen);
	if (ret)
		return ret;
	ret = rl_members_converge(&s->ifc, &pins, &s->cur, err, errlen);
	rl_pins_close(&pins);
	if (ret > 0)
		pr_warn("%s: the interfaces that share its limiter ran different programs (a "
			"command was interrupted): they run one again",
			s->ifc.name);
	return ret < 0 ? ret : 0;
}

int rl_apply_run(struct rl_apply_plan *p, size_t *done, char *err, size_t errlen)
{
	*done = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct rl_apply_step *s = &p->steps[i];
		const struct rl_apply_iface *w = s->want;
		char msg[RL_ERRLEN];
		int ret = 0;

		switch (s->action) {
		case RL_APPLY_NONE:
			/* Members of a limiter left on different programs by a killed command. */
			if (!*w->share)
				ret = run_converge(s, err, errlen);
			break;
		case RL_APPLY_ATTACH: {
			/* The stack's half of --syn-cookies first (synproxy.h), undone on failure. */
			int made = rl_synproxy_prepare(s->ifc.name, &s->cfg.syn,
						       w->o.syn_proxy == RL_SYN_PROXY_CHECK, err,
						       errlen);

			/* With the rules from the start: one program, attached once. */
			ret = made < 0 ? made :
					 rl_attach_rules(&s->ifc, w->mode, (__u32)w->max_sources,
							 (__u32)w->max_sources6, &s->cfg,
							 s->rules ? &w->rules : NULL, err, errlen);
			if (ret && made > 0)
				rl_synproxy_remove(s->ifc.name, msg, sizeof(msg));
			break;
		}
		case RL_APPLY_SET:
			ret = s->cfg.syn.n ?
				      rl_synproxy_prepare(s->ifc.name, &s->cfg.syn,
							  w->o.syn_proxy == RL_SYN_PROXY_CHECK, err,
							  errlen) :
				      0;
			if (ret >= 0)
				ret = run_set(s, err, errlen);
			if (!ret && !s->cfg.syn.n && s->cur.syn.n &&
			    rl_synproxy_remove(s->ifc.name, msg, sizeof(msg)) < 0)
				pr_warn("%s", msg);
			break;
		case RL_APPLY_DETACH:
			ret = rl_detach(&s->ifc, err, errlen);
			if (!ret && rl_synproxy_remove(s->ifc.name, msg, sizeof(msg)) < 0)
				pr_warn("%s", msg);
			break;
		case RL_APPLY_RULES:
			ret = run_rules(s, err, errlen);
			break;
		case RL_APPLY_SHARE: {
			struct rl_iface with;

			ret = rl_iface_get(w->share, &with, err, errlen);
			if (!ret)
				ret = rl_attach_share(&s->ifc, &with, w->mode, err, errlen);
			break;
		}
		}
		if (ret)
			return ret < 0 ? ret : -EIO;
		(*done)++;
	}
	return 0;
}

const char *rl_apply_action_name(enum rl_apply_action a)
{
	switch (a) {
	case RL_APPLY_NONE:
		return "unchanged";
	case RL_APPLY_ATTACH:
		return "attach";
	case RL_APPLY_SET:
		return "set";
	case RL_APPLY_DETACH:
		return "detach";
	case RL_APPLY_RULES:
		return "rules";
	case RL_APPLY_SHARE:
		return "share";
	}
	return "?";
}
