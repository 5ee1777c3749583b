// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit simulate: replay a packet trace through the shared rate core,
 * and with --rules through a rule set first (what the XDP program decides,
 * packet for packet).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "json_writer.h"
#include "level.h"
#include "source.h"
#include "textfile.h"
#include "trace.h"

/*
 * The levels above the source, when the policy has any: the refusals by
 * level (the new-sources level: with the admission cap's tallies) and each
 * aggregate's passed and refused packets.
 */
static void print_levels(const struct rl_sim *s, struct rl_json *w)
{
	const struct rl_level *a = &s->lvl[RL_LVL_PREFIX - 1];
	bool any = false, cap = s->lvl[RL_LVL_ADMIT - 1].on;
	struct rl_src **v;
	char buf[RL_KEY_STRLEN];

	for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_ADMIT; id++)
		any |= s->lvl[id - 1].on;
	if (!any)
		return;
	if (w) {
		jw_name(w, "levels");
		jw_start_object(w);
		for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_NEW; id++)
			if (s->lvl[id - 1].on)
				jw_uint_field(w, rl_level_name(id), s->ls.limited[id]);
		if (cap) {
			jw_uint_field(w, "unadmitted", s->ls.unadmitted);
			jw_uint_field(w, "admitted_seen", s->ls.admitted_seen);
		}
		jw_end_object(w);
	} else {
		printf("\nrefused by level:");
		for (unsigned int id = RL_LVL_PREFIX; id <= RL_LVL_NEW; id++)
			if (s->lvl[id - 1].on)
				printf(" %s %llu", rl_level_name(id),
				       (unsigned long long)s->ls.limited[id]);
		if (cap)
			printf("; new sources limited as one: %llu packets, given a state when seen "
			       "again: %llu",
			       (unsigned long long)s->ls.unadmitted,
			       (unsigned long long)s->ls.admitted_seen);
		putchar('\n');
	}
	if (!a->on)
		return;
	v = rl_srctab_sorted(&s->ls.agg);
	if (!v) {
		pr_err("out of memory");
		return;
	}
	if (w) {
		jw_name(w, "aggregates");
		jw_start_array(w);
	} else {
		printf("\n%-40s %12s %12s\n", "AGGREGATE", "PASSED", "REFUSED");
	}
	for (size_t i = 0; i < s->ls.agg.count; i++) {
		const char *name = rl_key_str(&v[i]->key, a->prefix4, a->prefix6, buf, sizeof(buf));

		if (w) {
			jw_start_object(w);
			jw_string_field(w, "aggregate", name);
			jw_uint_field(w, "passed", v[i]->passed);
			jw_uint_field(w, "refused", v[i]->dropped);
			jw_end_object(w);
		} else {
			printf("%-40s %12llu %12llu\n", name, (unsigned long long)v[i]->passed,
			       (unsigned long long)v[i]->dropped);
		}
	}
	if (w)
		jw_end_array(w);
	free(v);
}

/* The sources and the totals; in JSON the "summary" object, left open. */
static void sources_table(const struct rl_srctab *tab, unsigned int prefix4, unsigned int prefix6,
			  __u64 passed, __u64 dropped, struct rl_json *w)
{
	struct rl_src **v = rl_srctab_sorted(tab);
	char buf[RL_KEY_STRLEN];

	if (!v) {
		pr_err("out of memory");
		return;
	}
	if (w) {
		jw_name(w, "summary");
		jw_start_object(w);
		jw_name(w, "sources");
		jw_start_array(w);
	} else {
		printf("\n%-40s %12s %12s\n", "SOURCE", "PASSED", "DROPPED");
	}
	for (size_t i = 0; i < tab->count; i++) {
		const char *name = rl_key_str(&v[i]->key, prefix4, prefix6, buf, sizeof(buf));

		if (w) {
			jw_start_object(w);
			jw_string_field(w, "source", name);
			jw_uint_field(w, "passed", v[i]->passed);
			jw_uint_field(w, "dropped", v[i]->dropped);
			jw_end_object(w);
		} else {
			printf("%-40s %12llu %12llu\n", name, (unsigned long long)v[i]->passed,
			       (unsigned long long)v[i]->dropped);
		}
	}
	if (w) {
		jw_end_array(w);
		jw_uint_field(w, "passed", passed);
		jw_uint_field(w, "dropped", dropped);
	} else {
		printf("%-40s %12llu %12llu\n", "total", (unsigned long long)passed,
		       (unsigned long long)dropped);
	}
	free(v);
}

void simulate_sources(const struct rl_srctab *tab, unsigned int prefix4, unsigned int prefix6,
		      __u64 passed, __u64 dropped, struct rl_json *w)
{
	sources_table(tab, prefix4, prefix6, passed, dropped, w);
	if (w)
		jw_end_object(w);
}

static void print_summary(const struct rl_sim *s, struct rl_json *w)
{
	sources_table(&s->tab, s->pol.prefix4, s->pol.prefix6, s->passed, s->dropped, w);
	print_levels(s, w);
	if (w)
		jw_end_object(w);
}

void simulate_policy_json(const struct rl_policy *pol, const struct rl_params *params,
			  const struct rl_level *lvl, struct rl_json *w)
{
	char rate[64];

	jw_name(w, "policy");
	jw_start_object(w);
	jw_string_field(w, "algo", rl_algo_name(pol->algo));
	jw_string_field(w, "rate", rl_rate_str(pol, rate, sizeof(rate)));
	if (params->algo == RL_ALGO_TOKEN_BUCKET || params->algo == RL_ALGO_GCRA) {
		jw_uint_field(w, "burst", params->tau / params->unit_cost);
	} else {
		jw_uint_field(w, "window_ns", params->window_ns);
		jw_uint_field(w, "limit", params->limit);
	}
	jw_uint_field(w, "prefix4", pol->prefix4);
	jw_uint_field(w, "prefix6", pol->prefix6);
	for (unsigned int id = RL_LVL_PREFIX; lvl && id <= RL_LVL_ADMIT; id++)
		if (id != RL_LVL_NEW)
			rl_level_json(w, &lvl[id - 1], id);
	jw_end_object(w);
}

/* {"policy": {...}, "packets": [ ... and the caller goes on. */
static void print_policy_json(const struct rl_sim *s, struct rl_json *w)
{
	jw_start_object(w);
	simulate_policy_json(&s->pol, &s->params, s->lvl, w);
	jw_name(w, "packets");
	jw_start_array(w);
}

/*
 * A rules file holds at most RL_MAX_RULES rules, a line each; a long one is a
 * rule with a long --src list (a longer list belongs in a --src-file).
 */
#define RULES_FILE_MAX (16 << 20)

bool simulate_given(const struct rl_args *a, const char *name)
{
	const struct rl_opt *o = rl_opt_find(name, RL_G_SIMULATE);

	return o && a->given[o - rl_opt_table];
}

int simulate_load_rules(const char *path, const struct rl_policy *pol, const struct rl_opts *o,
			struct rl_ruleset *set)
{
	char err[RL_ERRLEN], *line = NULL, **words = NULL;
	size_t cap = 0, lineno = 0, nwords = 0, bytes = 0;
	struct rl_rule r;
	ssize_t len;
	FILE *f;
	int ret;

	ret = rl_ruleset_init(set, pol, o, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		return ret;
	}
	/* A regular file only: a FIFO would block here, a device never end. */
	f = rl_textfile_fopen(path, RULES_FILE_MAX, &ret, err, sizeof(err));
	if (!f) {
		pr_err("rules: %s", err);
		goto out_set;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *save = NULL, *tok;
		size_t n = 0;

		lineno++;
		bytes += (size_t)len;
		if (bytes > RULES_FILE_MAX) {
			pr_err("rules: '%s' is larger than %s (it grew while read)", path,
			       rl_textfile_size_str(RULES_FILE_MAX, err, sizeof(err)));
			ret = -EFBIG;
			goto out;
		}
		if (memchr(line, '\0', (size_t)len)) {
			pr_err("%s:%zu: holds a NUL byte: not a text file", path, lineno);
			ret = -EINVAL;
			goto out;
		}
		line[strcspn(line, "#")] = '\0';
		for (tok = strtok_r(line, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (n + 1 >= nwords) {
				char **v = realloc(words, (nwords * 2 + 16) * sizeof(*v));

				if (!v) {
					ret = -ENOMEM;
					pr_err("out of memory");
					goto out;
				}
				words = v;
				nwords = nwords * 2 + 16;
			}
			words[n++] = tok;
		}
		if (!n)
			continue;
		words[n] = NULL;
		ret = rl_rule_parse(&r, NULL, (const char *const *)words, err, sizeof(err));
		if (!ret) {
			ret = rl_ruleset_add(set, &r, NULL, err, sizeof(err));
			rl_rule_free(&r);
		}
		if (ret) {
			pr_err("%s:%zu: %s", path, lineno, err);
			goto out;
		}
	}
	if (ferror(f)) {
		pr_err("reading rules '%s': %s", path, strerror(errno));
		ret = -EIO;
	}
out:
	free(words);
	free(line);
	fclose(f);
out_set:
	if (ret)
		rl_ruleset_free(set);
	return ret;
}

void simulate_rule_totals(const struct rl_rsim *rs, struct rl_json *w)
{
	const struct rl_ruleset *set = rs->set;

	if (w) {
		jw_name(w, "rules");
		jw_start_array(w);
	} else {
		printf("\n%-31s %10s %10s %10s %10s %10s %10s %10s %10s\n", "RULE", "PASSED",
		       "DROPPED", "ALLOWED", "DENIED", "LIMITED", "BLOCKED", "WOULD_DROP",
		       "SOURCES");
	}
	for (size_t i = 0; i < set->n; i++) {
		const struct rl_rule_counters *c = &rs->cnt[i];

		if (w) {
			jw_start_object(w);
			jw_string_field(w, "name", set->rules[i].name);
			jw_uint_field(w, "passed", c->passed);
			jw_uint_field(w, "dropped", c->dropped);
			jw_uint_field(w, "allowed", c->allowed);
			jw_uint_field(w, "denied", c->denied);
			jw_uint_field(w, "limited", c->limited);
			jw_uint_field(w, "blocked", c->blocked);
			jw_uint_field(w, "would_drop", c->would_drop);
			jw_uint_field(w, "sources", rs->tabs[i].count);
			jw_end_object(w);
		} else {
			printf("%-31s %10llu %10llu %10llu %10llu %10llu %10llu %10llu %10zu\n",
			       set->rules[i].name, (unsigned long long)c->passed,
			       (unsigned long long)c->dropped, (unsigned long long)c->allowed,
			       (unsigned long long)c->denied, (unsigned long long)c->limited,
			       (unsigned long long)c->blocked, (unsigned long long)c->would_drop,
			       rs->tabs[i].count);
		}
	}
	if (w)
		jw_end_array(w);
}

static void print_rule_summary(const struct rl_rsim *rs, struct rl_json *w)
{
	__u64 passed = 0, dropped = 0;

	for (size_t i = 0; i < rs->set->n; i++) {
		passed += rs->cnt[i].passed;
		dropped += rs->cnt[i].dropped;
	}
	if (w) {
		jw_name(w, "summary");
		jw_start_object(w);
		jw_uint_field(w, "passed", passed);
		jw_uint_field(w, "dropped", dropped);
		jw_end_object(w);
		return;
	}
	simulate_rule_totals(rs, NULL);
	printf("%-31s %10llu %10llu\n", "total", (unsigned long long)passed,
	       (unsigned long long)dropped);
}

int cmd_simulate(const struct rl_args *a)
{
	const struct rl_policy *pol = &a->pol;
	struct rl_trace_pkt pkt;
	struct rl_sim sim;
	struct rl_ruleset set;
	struct rl_rsim rsim;
	struct rl_rsim_result res;
	struct rl_pkt_info info;
	struct rl_json w, *jw = a->json ? &w : NULL;
	char err[RL_ERRLEN], line[RL_TRACE_LINE_MAX + 1], buf[RL_KEY_STRLEN];
	__u64 lineno = 0, last_ns = 0, npkts = 0;
	FILE *in = stdin;
	int ret = 0, r;

	if (a->pcap)
		return cmd_simulate_pcap(a);
	/* A trace has no frames to parse, and one policy. */
	if (a->o.malformed_set || a->o.action_set || a->compare || a->plot ||
	    simulate_given(a, "sources")) {
		pr_err("simulate: %s is an option of --pcap (see " RL_PROG " simulate --help)",
		       a->o.malformed_set ? "--malformed" :
		       a->o.action_set	  ? "--action" :
		       a->compare	  ? "--compare" :
		       a->plot		  ? "--plot" :
					    "--sources");
		return 2;
	}
	if (a->npos) {
		pr_err("simulate: unexpected argument '%s' (policies to compare follow --pcap FILE "
		       "--compare; see " RL_PROG " simulate --help)",
		       a->pos[0]);
		return 2;
	}
	if (rl_sim_init(&sim, pol, err, sizeof(err)) || rl_policy_check(pol, err, sizeof(err))) {
		pr_err("%s", err);
		rl_sim_free(&sim);
		return 2;
	}
	if (a->rules) {
		if (simulate_load_rules(a->rules, pol, NULL, &set)) {
			rl_sim_free(&sim);
			return 2;
		}
		ret = rl_rsim_init(&rsim, &set);
		if (ret) {
			if (ret == -EOPNOTSUPP)
				pr_err("%s: a syn-cookies rule: SYN cookies are kernel-only (the "
				       "cookie is made from the kernel's secret), simulate cannot "
				       "replay them",
				       a->rules);
			else
				pr_err("out of memory");
			rl_ruleset_free(&set);
			rl_sim_free(&sim);
			return ret == -EOPNOTSUPP ? 2 : 1;
		}
	}
	if (a->trace && strcmp(a->trace, "-")) {
		in = fopen(a->trace, "r");
		if (!in) {
			pr_err("cannot open trace '%s': %s", a->trace, strerror(errno));
			ret = 1;
			goto out;
		}
	}
	if (jw) {
		jw_init(jw, stdout);
		print_policy_json(&sim, jw);
		/* The document has begun: a trace error ends it validly and goes to stderr. */
		rl_json_errors = false;
	}
	for (;;) {
		r = rl_trace_getline(in, line, sizeof(line), err, sizeof(err));
		if (r == 0 || r == -EIO)
			break;
		lineno++;
		if (r > 0)
			r = rl_trace_line(line, &pkt, err, sizeof(err));
		if (r < 0) {
			pr_err("trace line %llu: %s", (unsigned long long)lineno, err);
			ret = 1;
			break;
		}
		if (!r)
			continue;
		if (npkts && pkt.ns < last_ns) {
			pr_err("trace line %llu: timestamp %s is earlier than the line before (traces must be in time order)",
			       (unsigned long long)lineno, pkt.time);
			ret = 1;
			break;
		}
		last_ns = pkt.ns;
		if (a->rules) {
			rl_trace_pkt_info(&pkt, &info);
			r = rl_rsim_packet(&rsim, &info, pkt.ns, pkt.len, &res);
		} else {
			r = rl_sim_packet(&sim, &pkt.key, pkt.ns, pkt.len, NULL);
		}
		if (r < 0) {
			pr_err("out of memory at trace line %llu", (unsigned long long)lineno);
			ret = 1;
			break;
		}
		if (!a->quiet && a->rules) {
			const struct rl_rule *rule = &set.rules[res.rule];
			bool limit = rule->action == RL_RULE_LIMIT;
			const char *src =
				rl_key_str(&res.key, limit ? rule->pol.prefix4 : 32,
					   limit ? rule->pol.prefix6 : 128, buf, sizeof(buf));

			if (jw) {
				jw_start_object(jw);
				jw_string_field(jw, "time", pkt.time);
				jw_string_field(jw, "source", src);
				jw_string_field(jw, "verdict", r ? "allow" : "drop");
				jw_string_field(jw, "rule", rule->name);
				jw_string_field(jw, "reason", rl_reason_name(res.reason));
				if (res.dry_run)
					jw_bool_field(jw, "dry_run", true);
				jw_end_object(jw);
			} else {
				printf("%s %s %s %s\n", pkt.time, src, r ? "allow" : "drop",
				       rule->name);
			}
		} else if (!a->quiet) {
			const char *src =
				rl_key_str(&pkt.key, pol->prefix4, pol->prefix6, buf, sizeof(buf));

			/* The level that refused it, when not its source's limit. */
			const char *lv = !r && sim.level ? rl_level_name(sim.level) : NULL;

			if (jw) {
				jw_start_object(jw);
				jw_string_field(jw, "time", pkt.time);
				jw_string_field(jw, "source", src);
				jw_string_field(jw, "verdict", r ? "allow" : "drop");
				if (lv)
					jw_string_field(jw, "level", lv);
				jw_end_object(jw);
			} else {
				printf("%s %s %s%s%s\n", pkt.time, src, r ? "allow" : "drop",
				       lv ? " " : "", lv ? lv : "");
			}
		}
		npkts++;
	}
	if (!ret && ferror(in)) {
		pr_err("reading trace: %s", strerror(errno));
		ret = 1;
	}
	if (jw) {
		jw_end_array(jw);
		if (a->rules && !ret)
			simulate_rule_totals(&rsim, jw);
		if (a->summary && !ret && a->rules)
			print_rule_summary(&rsim, jw);
		else if (a->summary && !ret)
			print_summary(&sim, jw);
		jw_end_object(jw);
		jw_end(jw);
	} else if (a->summary && !ret && a->rules) {
		print_rule_summary(&rsim, NULL);
	} else if (a->summary && !ret) {
		print_summary(&sim, NULL);
	}
	if (in != stdin)
		fclose(in);
out:
	if (a->rules) {
		rl_rsim_free(&rsim);
		rl_ruleset_free(&set);
	}
	rl_sim_free(&sim);
	return ret;
}
