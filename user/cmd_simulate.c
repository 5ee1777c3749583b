// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-ratelimit simulate: replay a packet trace through the shared rate core. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "source.h"
#include "trace.h"

static void simulate_usage(FILE *f)
{
	fprintf(f,
		"Usage: " RL_PROG " simulate --rate RATE [POLICY OPTIONS] [--trace FILE]\n"
		"                            [--summary] [--quiet] [--json]\n"
		"\n"
		"Replays a packet trace through the same rate algorithms that the XDP program\n"
		"runs, and prints each packet's verdict: \"TIMESTAMP SOURCE allow|drop\".\n"
		"\n"
		"The trace has one packet per line: TIMESTAMP [SOURCE [LENGTH]]\n"
		"  TIMESTAMP  seconds with up to 9 decimals, in time order (read exactly)\n"
		"  SOURCE     an IPv4 or IPv6 address; without it all packets share one\n"
		"             source, printed as '-'\n"
		"  LENGTH     the frame length in bytes (1-65535, default 64); it is the\n"
		"             packet's cost when the rate is a byte rate\n"
		"Blank lines and everything after '#' are ignored. A line may be at most\n"
		"4096 bytes long and hold no NUL byte.\n"
		"\n"
		"Options:\n"
		"  --trace FILE  read the trace from FILE (default: standard input)\n"
		"  --summary     add per-source and total counts at the end\n"
		"  --quiet       no per-packet lines (use with --summary)\n"
		"  --json        the same as one JSON object\n"
		"\n%s"
		"\n"
		"Example: after 5 s idle, 30 packets within 20 ms; token-bucket with rate 10\n"
		"and burst 20 passes the first 20:\n"
		"  seq 0 29 | awk '{printf \"%%.6f 198.18.0.1\\n\", 5 + $1 * 0.02 / 30}' |\n"
		"      " RL_PROG " simulate --rate 10 --burst 20 --summary\n"
		"\n"
		"Exit status: 0 on success, 1 for a malformed trace, 2 for bad options.\n",
		rl_policy_help);
}

struct sim_opts {
	const char *trace;
	bool summary, quiet, json;
};

static int parse_args(int argc, char **argv, struct rl_policy *pol, struct sim_opts *o)
{
	char err[RL_ERRLEN];
	int ret;

	for (int i = 1; i < argc; i++) {
		ret = rl_policy_option(pol, argc, argv, &i, err, sizeof(err));
		if (ret < 0) {
			pr_err("%s", err);
			return -EINVAL;
		}
		if (ret)
			continue;
		if (!strcmp(argv[i], "--trace")) {
			if (i + 1 == argc) {
				pr_err("--trace needs a file name");
				return -EINVAL;
			}
			o->trace = argv[++i];
		} else if (!strncmp(argv[i], "--trace=", 8)) {
			o->trace = argv[i] + 8;
		} else if (!strcmp(argv[i], "--summary")) {
			o->summary = true;
		} else if (!strcmp(argv[i], "--quiet")) {
			o->quiet = true;
		} else if (!strcmp(argv[i], "--json")) {
			o->json = true;
		} else {
			pr_err("simulate: unknown option '%s' (see " RL_PROG " simulate --help)",
			       argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static void print_summary(const struct rl_sim *s, bool json)
{
	struct rl_src **v = rl_srctab_sorted(&s->tab);
	char buf[RL_KEY_STRLEN];

	if (!v) {
		pr_err("out of memory");
		return;
	}
	if (json)
		printf(",\n\"summary\":{\"sources\":[");
	else
		printf("\n%-40s %12s %12s\n", "SOURCE", "PASSED", "DROPPED");
	for (size_t i = 0; i < s->tab.count; i++) {
		const char *name = rl_key_str(&v[i]->key, s->pol.prefix4, s->pol.prefix6, buf,
					      sizeof(buf));
		if (json) {
			printf("%s{\"source\":", i ? "," : "");
			rl_json_str(stdout, name);
			printf(",\"passed\":%llu,\"dropped\":%llu}",
			       (unsigned long long)v[i]->passed, (unsigned long long)v[i]->dropped);
		} else {
			printf("%-40s %12llu %12llu\n", name, (unsigned long long)v[i]->passed,
			       (unsigned long long)v[i]->dropped);
		}
	}
	if (json)
		printf("],\"passed\":%llu,\"dropped\":%llu}", (unsigned long long)s->passed,
		       (unsigned long long)s->dropped);
	else
		printf("%-40s %12llu %12llu\n", "total", (unsigned long long)s->passed,
		       (unsigned long long)s->dropped);
	free(v);
}

static void print_policy_json(const struct rl_sim *s)
{
	char rate[64];

	printf("{\"policy\":{\"algo\":\"%s\",\"rate\":", rl_algo_name(s->pol.algo));
	rl_json_str(stdout, rl_rate_str(&s->pol, rate, sizeof(rate)));
	if (s->params.algo == RL_ALGO_TOKEN_BUCKET || s->params.algo == RL_ALGO_GCRA)
		printf(",\"burst\":%llu",
		       (unsigned long long)(s->params.tau / s->params.unit_cost));
	else
		printf(",\"window_ns\":%llu,\"limit\":%llu", (unsigned long long)s->params.window_ns,
		       (unsigned long long)s->params.limit);
	printf(",\"prefix4\":%u,\"prefix6\":%u},\n\"packets\":[", s->pol.prefix4, s->pol.prefix6);
}

int cmd_simulate(int argc, char **argv)
{
	struct sim_opts o = {};
	struct rl_policy pol;
	struct rl_trace_pkt pkt;
	struct rl_sim sim;
	char err[RL_ERRLEN], line[RL_TRACE_LINE_MAX + 1], buf[RL_KEY_STRLEN];
	__u64 lineno = 0, last_ns = 0, npkts = 0;
	FILE *in = stdin;
	int ret = 0, r;

	for (int i = 1; i < argc; i++) {
		if (rl_is_help(argv[i])) {
			simulate_usage(stdout);
			return 0;
		}
	}
	rl_policy_defaults(&pol);
	if (parse_args(argc, argv, &pol, &o))
		return 2;
	if (rl_sim_init(&sim, &pol, err, sizeof(err)) || rl_policy_check(&pol, err, sizeof(err))) {
		pr_err("%s", err);
		rl_sim_free(&sim);
		return 2;
	}
	if (o.trace && strcmp(o.trace, "-")) {
		in = fopen(o.trace, "r");
		if (!in) {
			pr_err("cannot open trace '%s': %s", o.trace, strerror(errno));
			rl_sim_free(&sim);
			return 1;
		}
	}
	if (o.json)
		print_policy_json(&sim);
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
		if (!o.quiet) {
			const char *src = rl_key_str(&pkt.key, pol.prefix4, pol.prefix6, buf,
						     sizeof(buf));

			if (o.json)
				printf("%s\n{\"time\":\"%s\",\"source\":\"%s\",\"verdict\":\"%s\"}",
				       npkts ? "," : "", pkt.time, src, r ? "allow" : "drop");
			else
				printf("%s %s %s\n", pkt.time, src, r ? "allow" : "drop");
		}
		npkts++;
	}
	if (!ret && ferror(in)) {
		pr_err("reading trace: %s", strerror(errno));
		ret = 1;
	}
	if (o.json) {
		printf("]");
		if (o.summary && !ret)
			print_summary(&sim, true);
		printf("}\n");
	} else if (o.summary && !ret) {
		print_summary(&sim, false);
	}
	if (in != stdin)
		fclose(in);
	rl_sim_free(&sim);
	return ret;
}
