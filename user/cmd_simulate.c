// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit simulate: replay a packet trace through the shared rate core. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "json_writer.h"
#include "source.h"
#include "trace.h"

static void print_summary(const struct rl_sim *s, struct rl_json *w)
{
	struct rl_src **v = rl_srctab_sorted(&s->tab);
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
	for (size_t i = 0; i < s->tab.count; i++) {
		const char *name =
			rl_key_str(&v[i]->key, s->pol.prefix4, s->pol.prefix6, buf, sizeof(buf));
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
		jw_uint_field(w, "passed", s->passed);
		jw_uint_field(w, "dropped", s->dropped);
		jw_end_object(w);
	} else {
		printf("%-40s %12llu %12llu\n", "total", (unsigned long long)s->passed,
		       (unsigned long long)s->dropped);
	}
	free(v);
}

/* {"policy": {...}, "packets": [ ... and the caller goes on. */
static void print_policy_json(const struct rl_sim *s, struct rl_json *w)
{
	char rate[64];

	jw_start_object(w);
	jw_name(w, "policy");
	jw_start_object(w);
	jw_string_field(w, "algo", rl_algo_name(s->pol.algo));
	jw_string_field(w, "rate", rl_rate_str(&s->pol, rate, sizeof(rate)));
	if (s->params.algo == RL_ALGO_TOKEN_BUCKET || s->params.algo == RL_ALGO_GCRA) {
		jw_uint_field(w, "burst", s->params.tau / s->params.unit_cost);
	} else {
		jw_uint_field(w, "window_ns", s->params.window_ns);
		jw_uint_field(w, "limit", s->params.limit);
	}
	jw_uint_field(w, "prefix4", s->pol.prefix4);
	jw_uint_field(w, "prefix6", s->pol.prefix6);
	jw_end_object(w);
	jw_name(w, "packets");
	jw_start_array(w);
}

int cmd_simulate(const struct rl_args *a)
{
	const struct rl_policy *pol = &a->pol;
	struct rl_trace_pkt pkt;
	struct rl_sim sim;
	struct rl_json w, *jw = a->json ? &w : NULL;
	char err[RL_ERRLEN], line[RL_TRACE_LINE_MAX + 1], buf[RL_KEY_STRLEN];
	__u64 lineno = 0, last_ns = 0, npkts = 0;
	FILE *in = stdin;
	int ret = 0, r;

	if (rl_sim_init(&sim, pol, err, sizeof(err)) || rl_policy_check(pol, err, sizeof(err))) {
		pr_err("%s", err);
		rl_sim_free(&sim);
		return 2;
	}
	if (a->trace && strcmp(a->trace, "-")) {
		in = fopen(a->trace, "r");
		if (!in) {
			pr_err("cannot open trace '%s': %s", a->trace, strerror(errno));
			rl_sim_free(&sim);
			return 1;
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
		r = rl_sim_packet(&sim, &pkt.key, pkt.ns, pkt.len, NULL);
		if (r < 0) {
			pr_err("out of memory at trace line %llu", (unsigned long long)lineno);
			ret = 1;
			break;
		}
		if (!a->quiet) {
			const char *src =
				rl_key_str(&pkt.key, pol->prefix4, pol->prefix6, buf, sizeof(buf));

			if (jw) {
				jw_start_object(jw);
				jw_string_field(jw, "time", pkt.time);
				jw_string_field(jw, "source", src);
				jw_string_field(jw, "verdict", r ? "allow" : "drop");
				jw_end_object(jw);
			} else {
				printf("%s %s %s\n", pkt.time, src, r ? "allow" : "drop");
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
		if (a->summary && !ret)
			print_summary(&sim, jw);
		jw_end_object(jw);
		jw_end(jw);
	} else if (a->summary && !ret) {
		print_summary(&sim, NULL);
	}
	if (in != stdin)
		fclose(in);
	rl_sim_free(&sim);
	return ret;
}
