// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rules from the option table and back (rules.h): a rule from its words or
 * from options given one by one, the checks of a rule as a whole, printing
 * back as "rule add" words and as JSON, the rule set.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_writer.h"
#include "level.h"
#include "log.h"
#include "opts.h"
#include "rules.h"

/* ---- parsing ---- */

/* The long name of the first option of @groups given, for messages ("" if none). */
static const char *first_given(const struct rl_args *a, unsigned int groups)
{
	for (size_t i = 0; i < rl_opt_count; i++)
		if (a->given[i] && (rl_opt_table[i].group & groups))
			return rl_opt_table[i].name;
	return "";
}

static bool given(const struct rl_args *a, const char *name)
{
	const struct rl_opt *o = rl_opt_find(name, ~0U);

	return o && a->given[o - rl_opt_table];
}

/*
 * What a rule may not say, beyond single option values. A message about one
 * option names it in *@about and holds what follows it (rl_params_init_about()).
 */
static int check_rule(const char *name, const struct rl_args *a, const char **before,
		      const char **about, char *err, size_t errlen)
{
	bool limit = !a->allow && !a->deny && !a->syn_rule;
	const char *act = a->allow ? "allow" : a->deny ? "deny" : "syn-cookies";

	*about = NULL;
	if (!name) {
		snprintf(err, errlen, "give the rule a NAME");
		return -EINVAL;
	}
	if (strlen(name) >= RL_RULE_NAME_LEN) {
		snprintf(err, errlen, "rule name '%s' is longer than %d characters", name,
			 RL_RULE_NAME_LEN - 1);
		return -EINVAL;
	}
	if (!rl_rule_name_ok(name)) {
		snprintf(err, errlen,
			 "rule name '%s' may hold only letters, digits, '_', '.' and '-' (not "
			 "first)",
			 name);
		return -EINVAL;
	}
	if (!strcmp(name, RL_RULE_DEFAULT)) {
		snprintf(err, errlen,
			 "'default' is the last rule, made from the attach policy; name the rule "
			 "otherwise (change the default with set)");
		return -EINVAL;
	}
	if (a->allow + a->deny + a->syn_rule > 1) {
		*about = a->allow ? "allow" : "deny";
		snprintf(err, errlen, " and --%s are two actions: give one",
			 a->syn_rule ? "syn-cookies" : "deny");
		return -EINVAL;
	}
	if (a->syn_rule && given(a, "on-insert-fail")) {
		*about = "on-insert-fail";
		snprintf(err, errlen,
			 " has no meaning with --syn-cookies (it keeps no per-source state)");
		return -EINVAL;
	}
	if (!limit && rl_args_given(a, RL_G_POLICY)) {
		*about = act;
		snprintf(
			err, errlen,
			" and --%s are two actions: a rule allows, denies, or limits with a policy",
			first_given(a, RL_G_POLICY));
		return -EINVAL;
	}
	if (limit && !rl_args_given(a, RL_G_POLICY)) {
		snprintf(err, errlen,
			 "no action: give --allow, --deny, --syn-cookies or a limit policy (--rate "
			 "RATE [POLICY OPTIONS])");
		return -EINVAL;
	}
	if (limit && !a->pol.rate_set) {
		snprintf(err, errlen, "a limit rule needs --rate (--%s alone is no limit)",
			 first_given(a, RL_G_POLICY));
		return -EINVAL;
	}
	if (!limit && a->block_set) {
		*about = "block";
		snprintf(err, errlen, " needs a limit policy (--rate ...), not --%s", act);
		return -EINVAL;
	}
	if (given(a, "admit-rate") || given(a, "admit-burst")) {
		*about = given(a, "admit-rate") ? "admit-rate" : "admit-burst";
		snprintf(err, errlen,
			 " caps the new sources of the interface's table (attach, set), not of a "
			 "rule");
		return -EINVAL;
	}
	if (given(a, "clock") || given(a, "malformed")) {
		*about = given(a, "clock") ? "clock" : "malformed";
		snprintf(
			err, errlen,
			" applies to every packet of the interface (attach, set), not to one rule");
		return -EINVAL;
	}
	if (a->allow && rl_args_given(a, RL_G_LIMITER)) {
		*about = first_given(a, RL_G_LIMITER);
		snprintf(err, errlen, " has no meaning with --allow (it drops nothing)");
		return -EINVAL;
	}
	if (a->deny && given(a, "on-insert-fail")) {
		*about = "on-insert-fail";
		snprintf(err, errlen, " has no meaning with --deny (it keeps no per-source state)");
		return -EINVAL;
	}
	if (a->before && !before) {
		*about = "before";
		snprintf(err, errlen,
			 " has no meaning here: rules apply in the order they are written");
		return -EINVAL;
	}
	return 0;
}

int rl_rule_from_args(struct rl_rule *r, const char *name, const struct rl_args *a,
		      const char **before, const char **about, char *err, size_t errlen)
{
	int ret;

	ret = check_rule(name, a, before, about, err, errlen);
	if (ret)
		goto fail;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->action = a->allow	? RL_RULE_ALLOW :
		    a->deny	? RL_RULE_DENY :
		    a->syn_rule ? RL_RULE_SYN :
				  RL_RULE_LIMIT;
	r->pol = a->pol;
	r->o = a->o;
	r->block_ns = a->block_set ? a->block_ns : 0;
	ret = rl_rule_prepare_about(r, about, err, errlen);
	if (ret)
		goto fail;
	if (rl_rule_src_empty(r))
		pr_warn("rule '%s': its source list is empty: it matches no packet", r->name);
	if (before)
		*before = a->before;
	return 0;
fail:
	rl_rule_free(r);
	return ret == -ENOMEM ? ret : -EINVAL;
}

int rl_rule_parse(struct rl_rule *r, const char **before, const char *const *words, char *err,
		  size_t errlen)
{
	const char *about = NULL;
	struct rl_args a;
	char **argv;
	size_t n = 0;
	int ret;

	rl_rule_init(r);
	while (words[n])
		n++;
	argv = calloc(n + 2, sizeof(*argv));
	if (!argv) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	argv[0] = "rule";
	memcpy(argv + 1, words, n * sizeof(*argv));
	rl_args_defaults(&a);
	a.rule = r;
	ret = rl_args_parse(&a, RL_G_RULE | RL_G_POLICY | RL_G_LIMITER, 1, (int)n + 1, argv, err,
			    errlen);
	if (ret) {
		rl_rule_free(r);
		ret = ret == -ENOMEM ? ret : -EINVAL;
	} else {
		ret = rl_rule_from_args(r, a.npos ? a.pos[0] : NULL, &a, before, &about, err,
					errlen);
		if (ret && about)
			rl_about_cli(err, errlen, about);
	}
	free(argv);
	return ret;
}

/* ---- printing ---- */

/* snprintf() into a buffer that may be too small, counting what it needs. */
struct sbuf {
	char *buf;
	size_t len, off;
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (b->off < b->len)
		n = vsnprintf(b->buf + b->off, b->len - b->off, fmt, ap);
	else
		n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->off += (size_t)n;
}

/* "90m", "1500ms", "7ns": the largest unit that holds @ns whole (rl_parse_duration() reads it). */
static char *dur_str(__u64 ns, char *buf, size_t len)
{
	static const struct {
		const char *unit;
		__u64 ns;
	} units[] = { { "h", 3600000000000ULL }, { "m", 60000000000ULL }, { "s", 1000000000ULL },
		      { "ms", 1000000 },	 { "us", 1000 },	  { "ns", 1 } };
	size_t i = 0;

	while (ns && ns % units[i].ns)
		i++;
	snprintf(buf, len, "%llu%s", (unsigned long long)(ns / units[i].ns), units[i].unit);
	return buf;
}

static char *prefix4_str(const struct rl_prefix4 *p, char *buf, size_t len)
{
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &p->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, p->len);
	return buf;
}

static char *prefix6_str(const struct rl_prefix6 *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, p->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, p->len);
	return buf;
}

/* "syn", "SA/SA", "/R" (R clear), as --tcp-flags reads them. */
static char *flags_arg(const struct rl_rule_l4 *l4, char *buf, size_t len)
{
	char v[9], m[9];

	if (l4->tcp_value == RL_TCP_SYN && l4->tcp_mask == (RL_TCP_SYN | RL_TCP_ACK))
		snprintf(buf, len, "syn");
	else
		snprintf(buf, len, "%s/%s", l4->tcp_value ? rl_tcp_flags_str(l4->tcp_value, v) : "",
			 rl_tcp_flags_str(l4->tcp_mask, m));
	return buf;
}

static const char *const action_names[] = { "allow", "deny", "limit", "syn-cookies" };

/*
 * A limit rule's levels above the source (user/lib/level.h), in the words
 * that make them: from the levels built, so a rule read back from the
 * kernel prints as the rule it was made from (a burst left to its default
 * printed as the value it took).
 */
static void level_words(struct sbuf *b, const struct rl_rule *r, char *s, size_t len)
{
	static const char *const opt[] = {
		[RL_LVL_PREFIX] = "aggregate", [RL_LVL_IFACE] = "iface"
	};

	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_IFACE; id++) {
		const struct rl_level *l = &r->lvl[id - 1];
		struct rl_policy q;

		if (!l->on)
			continue;
		if (id == RL_LVL_PREFIX && (l->on & RL_LVL_ON4))
			sb_printf(b, " --aggregate4 %u", l->prefix4);
		if (id == RL_LVL_PREFIX && (l->on & RL_LVL_ON6))
			sb_printf(b, " --aggregate6 %u", l->prefix6);
		rl_policy_defaults(&q);
		q.rate_num = l->rate_num;
		q.rate_den = l->rate_den;
		q.bytes = l->params.bytes;
		sb_printf(b, " --%s-rate %s", opt[id], rl_rate_str(&q, s, len));
		if (l->params.algo == RL_ALGO_TOKEN_BUCKET || l->params.algo == RL_ALGO_GCRA)
			sb_printf(b, " --%s-burst %llu", opt[id], (unsigned long long)l->burst);
	}
}

size_t rl_rule_format(const struct rl_rule *r, char *buf, size_t len)
{
	struct sbuf b = { buf, len, 0 };
	char s[INET6_ADDRSTRLEN + 8];

	if (len)
		buf[0] = '\0';
	sb_printf(&b, "%s", r->name);
	if (rl_rule_src_empty(r))
		sb_printf(&b, " --src %s", RL_SRC_NONE);
	for (size_t i = 0; i < r->n4 + r->n6; i++) {
		if (i < r->n4)
			prefix4_str(&r->src4[i], s, sizeof(s));
		else
			prefix6_str(&r->src6[i - r->n4], s, sizeof(s));
		sb_printf(&b, "%s%s", i ? "," : " --src ", s);
	}
	if (r->l4.fields & RL_MATCH_PROTO)
		sb_printf(&b, " --proto %s", rl_proto_name(r->l4.proto, s, sizeof(s)));
	if ((r->l4.fields & RL_MATCH_DPORT) && r->l4.dport_lo == r->l4.dport_hi)
		sb_printf(&b, " --dport %u", r->l4.dport_lo);
	else if (r->l4.fields & RL_MATCH_DPORT)
		sb_printf(&b, " --dport %u-%u", r->l4.dport_lo, r->l4.dport_hi);
	if (r->l4.fields & RL_MATCH_FLAGS)
		sb_printf(&b, " --tcp-flags %s", flags_arg(&r->l4, s, sizeof(s)));
	if (r->action != RL_RULE_LIMIT) {
		sb_printf(&b, " --%s", action_names[r->action]);
	} else {
		const struct rl_policy *p = &r->pol;

		if (p->algo_set)
			sb_printf(&b, " --algo %s", rl_algo_name(p->algo));
		sb_printf(&b, " --rate %s", rl_rate_str(p, s, sizeof(s)));
		if (p->burst_set)
			sb_printf(&b, " --burst %llu", (unsigned long long)p->burst);
		if (p->window_set)
			sb_printf(&b, " --window %s", dur_str(p->window_ns, s, sizeof(s)));
		if (p->initial_set)
			sb_printf(&b, " --initial %llu", (unsigned long long)p->initial);
		if (p->prefix4_set)
			sb_printf(&b, " --prefix4 %u", p->prefix4);
		if (p->prefix6_set)
			sb_printf(&b, " --prefix6 %u", p->prefix6);
		level_words(&b, r, s, sizeof(s));
		if (r->o.fail_set)
			sb_printf(&b, " --on-insert-fail %s",
				  r->o.fail_policy == RL_FAIL_DROP ? "drop" : "pass");
		if (r->block_ns)
			sb_printf(&b, " --block %s", dur_str(r->block_ns, s, sizeof(s)));
	}
	if (r->o.action_set)
		sb_printf(&b, " --action %s",
			  r->o.action == RL_ACTION_DRY_RUN ? "dry-run" : "drop");
	return b.off;
}

/* A limit rule's levels, "aggregate" and "iface" objects (nothing for a level off). */
static void level_json(struct rl_json *w, const struct rl_rule *r)
{
	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_IFACE; id++)
		rl_level_json(w, &r->lvl[id - 1], id);
}

void rl_rule_json(struct rl_json *w, const struct rl_rule *r)
{
	char s[INET6_ADDRSTRLEN + 8];

	jw_start_object(w);
	jw_string_field(w, "name", r->name);
	jw_name(w, "match");
	jw_start_object(w);
	/* An empty list is written as one ([]): it matches no source. */
	if (r->src_given) {
		jw_name(w, "src");
		jw_start_array(w);
		for (size_t i = 0; i < r->n4; i++)
			jw_string(w, prefix4_str(&r->src4[i], s, sizeof(s)));
		for (size_t i = 0; i < r->n6; i++)
			jw_string(w, prefix6_str(&r->src6[i], s, sizeof(s)));
		jw_end_array(w);
	}
	if (r->l4.fields & RL_MATCH_PROTO)
		jw_string_field(w, "proto", rl_proto_name(r->l4.proto, s, sizeof(s)));
	if (r->l4.fields & RL_MATCH_DPORT) {
		jw_name(w, "dport");
		jw_start_object(w);
		jw_uint_field(w, "lo", r->l4.dport_lo);
		jw_uint_field(w, "hi", r->l4.dport_hi);
		jw_end_object(w);
	}
	if (r->l4.fields & RL_MATCH_FLAGS) {
		jw_name(w, "tcp_flags");
		jw_start_object(w);
		jw_string_field(w, "value", rl_tcp_flags_str(r->l4.tcp_value, s));
		jw_string_field(w, "mask", rl_tcp_flags_str(r->l4.tcp_mask, s));
		jw_end_object(w);
	}
	jw_end_object(w);
	jw_string_field(w, "action", action_names[r->action]);
	jw_bool_field(w, "dry_run", r->o.action == RL_ACTION_DRY_RUN);
	if (r->action == RL_RULE_LIMIT) {
		jw_name(w, "policy");
		jw_start_object(w);
		jw_string_field(w, "algo", rl_algo_name(r->pol.algo));
		jw_string_field(w, "rate", rl_rate_str(&r->pol, s, sizeof(s)));
		if (r->params.algo == RL_ALGO_TOKEN_BUCKET || r->params.algo == RL_ALGO_GCRA) {
			jw_uint_field(w, "burst",
				      r->params.unit_cost ? r->params.tau / r->params.unit_cost :
							    0);
		} else {
			jw_uint_field(w, "window_ns", r->params.window_ns);
			jw_uint_field(w, "limit", r->params.limit);
		}
		jw_uint_field(w, "prefix4", r->pol.prefix4);
		jw_uint_field(w, "prefix6", r->pol.prefix6);
		jw_end_object(w);
		level_json(w, r);
		jw_uint_field(w, "block_ns", r->block_ns);
	}
	jw_end_object(w);
}

/* ---- the rule set ---- */

int rl_ruleset_init(struct rl_ruleset *s, const struct rl_policy *pol, const struct rl_opts *o,
		    char *err, size_t errlen)
{
	struct rl_rule *d;
	int ret;

	memset(s, 0, sizeof(*s));
	s->cap = 8;
	s->rules = calloc(s->cap, sizeof(*s->rules));
	if (!s->rules) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d = &s->rules[0];
	rl_rule_init(d);
	snprintf(d->name, sizeof(d->name), RL_RULE_DEFAULT);
	d->action = RL_RULE_LIMIT;
	d->pol = *pol;
	if (o)
		d->o = *o;
	ret = rl_rule_prepare(d, err, errlen);
	if (ret) {
		free(s->rules);
		memset(s, 0, sizeof(*s));
		return ret;
	}
	s->n = 1;
	return 0;
}

void rl_ruleset_free(struct rl_ruleset *s)
{
	for (size_t i = 0; i < s->n; i++)
		rl_rule_free(&s->rules[i]);
	free(s->rules);
	memset(s, 0, sizeof(*s));
}

int rl_ruleset_find(const struct rl_ruleset *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->rules[i].name, name))
			return (int)i;
	return -1;
}

int rl_ruleset_add(struct rl_ruleset *s, struct rl_rule *r, const char *before, char *err,
		   size_t errlen)
{
	size_t at = s->n - 1, np = r->n4 + r->n6;

	if (!strcmp(r->name, RL_RULE_DEFAULT)) {
		snprintf(err, errlen, "there is always a rule 'default' (the attach policy)");
		return -EINVAL;
	}
	if (!rl_rule_name_ok(r->name) || ((r->n4 && !r->r4) || (r->n6 && !r->r6))) {
		snprintf(err, errlen, "rule '%s' is not prepared (rl_rule_prepare())", r->name);
		return -EINVAL;
	}
	if (rl_ruleset_find(s, r->name) >= 0) {
		snprintf(err, errlen, "a rule named '%s' exists (rule del it first)", r->name);
		return -EEXIST;
	}
	if (before && strcmp(before, RL_RULE_DEFAULT)) {
		int i = rl_ruleset_find(s, before);

		if (i < 0) {
			snprintf(err, errlen, "--before %s: no rule of that name", before);
			return -ENOENT;
		}
		at = (size_t)i;
	}
	if (s->n + 1 > RL_MAX_RULES) {
		snprintf(err, errlen,
			 "rule '%s' would make %zu rules, more than the %d of an interface",
			 r->name, s->n + 1, RL_MAX_RULES);
		return -ENOSPC;
	}
	if (s->nprefixes + np > RL_MAX_PREFIXES) {
		snprintf(
			err, errlen,
			"rule '%s' would make %zu source prefixes, more than the %d of an interface",
			r->name, s->nprefixes + np, RL_MAX_PREFIXES);
		return -ENOSPC;
	}
	if (s->n == s->cap) {
		struct rl_rule *v = realloc(s->rules, 2 * s->cap * sizeof(*v));

		if (!v) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		s->rules = v;
		s->cap *= 2;
	}
	memmove(&s->rules[at + 1], &s->rules[at], (s->n - at) * sizeof(*s->rules));
	s->rules[at] = *r;
	s->n++;
	s->nprefixes += np;
	/* The set owns the arrays now. */
	rl_rule_init(r);
	return 0;
}

int rl_ruleset_del(struct rl_ruleset *s, const char *name, char *err, size_t errlen)
{
	int i;

	if (!strcmp(name, RL_RULE_DEFAULT)) {
		snprintf(err, errlen,
			 "the rule 'default' cannot be deleted (it is the attach policy: change it "
			 "with set, or detach)");
		return -EINVAL;
	}
	i = rl_ruleset_find(s, name);
	if (i < 0) {
		snprintf(err, errlen, "no rule named '%s'", name);
		return -ENOENT;
	}
	s->nprefixes -= s->rules[i].n4 + s->rules[i].n6;
	rl_rule_free(&s->rules[i]);
	memmove(&s->rules[i], &s->rules[i + 1], (s->n - (size_t)i - 1) * sizeof(*s->rules));
	s->n--;
	return 0;
}

size_t rl_ruleset_match(const struct rl_ruleset *s, const struct rl_pkt_info *p)
{
	for (size_t i = 0; i + 1 < s->n; i++)
		if (rl_rule_match(&s->rules[i], p))
			return i;
	return s->n - 1;
}
