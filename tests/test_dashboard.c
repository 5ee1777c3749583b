// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The Grafana dashboard of dist/: every metric its queries name is one the
 * exporter serves, with the labels the queries select on, and every query is
 * PromQL that promtool parses. The exporter is the real one, scraped over
 * loopback, on a real limiter made to have a sample of every metric: a limit
 * rule with --block, an interface sharing the limiter, and a sync agent run
 * against a Redis that is not there (the agent then records its fallback
 * state, which the exporter serves). Run from the source tree (tests/run.sh
 * does).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netns.h"
#include "test.h"

#define DASHBOARD   "dist/grafana-dashboard.json"
#define SHARE_IF    "rlx.dash0"
#define MAX_QUERIES 256

/* The queries of the dashboard: the JSON string values of "expr" and "query" keys. */
struct queries {
	char *q[MAX_QUERIES];
	int n;
};

static char *slurp(const char *path)
{
	char *out = NULL;

	if (rl_sh(&out, "cat '%s'", path)) {
		free(out);
		return NULL;
	}
	return out;
}

/* The JSON string at @p (just after its opening quote), unescaped; *@end past its closing quote. */
static char *json_string(const char *p, const char **end)
{
	char *s = malloc(strlen(p) + 1), *o = s;

	if (!s)
		return NULL;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			*o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	*end = *p ? p + 1 : p;
	return s;
}

/* Every string value of key @key in @json, appended to @qs. */
static void collect(const char *json, const char *key, struct queries *qs)
{
	char needle[32];
	const char *p = json;

	snprintf(needle, sizeof(needle), "\"%s\":", key);
	while ((p = strstr(p, needle))) {
		p += strlen(needle);
		while (isspace((unsigned char)*p))
			p++;
		if (*p != '"' || qs->n == MAX_QUERIES)
			continue; /* an object ("query": {...}): its own "query" inside is found next */
		qs->q[qs->n++] = json_string(p + 1, &p);
	}
}

/* A Grafana query as PromQL: variables made plain, label_values(SELECTOR, L) its selector. */
static char *promql(const char *q)
{
	char *s = NULL, *p;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	if (!strncmp(q, "label_values(", 13)) {
		const char *comma = strrchr(q, ',');

		fprintf(f, "%.*s", comma ? (int)(comma - q - 13) : 0, q + 13);
	} else {
		fputs(q, f);
	}
	fclose(f);
	/* In place, each replacement no longer than what it replaces. */
	static const char *const vars[][2] = { { "$__rate_interval", "5m" }, { "$__range", "1h" },
					       { "$instance", ".*" },	     { "$netns", ".*" },
					       { "$iface", ".*" },	     { "$rule", ".*" } };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		while ((p = strstr(s, vars[i][0]))) {
			size_t a = strlen(vars[i][0]), b = strlen(vars[i][1]);

			memcpy(p, vars[i][1], b);
			memmove(p + b, p + a, strlen(p + a) + 1);
		}
	return s;
}

/* The scrape has a sample of @metric (not only its # TYPE) with label @label (NULL: any). */
static bool has_sample(const char *scrape, const char *metric, const char *label)
{
	char head[128], lab[64];
	const char *p = scrape;

	snprintf(head, sizeof(head), "\n%s", metric);
	snprintf(lab, sizeof(lab), "%s=\"", label ? label : "");
	while ((p = strstr(p, head))) {
		const char *eol = strchrnul(p + 1, '\n'), *l;

		p += strlen(head);
		if (*p != '{' && *p != ' ')
			continue; /* another metric whose name starts with this one */
		if (!label)
			return true;
		l = strstr(p, lab);
		if (l && l < eol && (l[-1] == '{' || l[-1] == ','))
			return true;
	}
	return false;
}

/* Prometheus adds these to every series it scrapes. */
static bool target_label(const char *l)
{
	return !strcmp(l, "instance") || !strcmp(l, "job");
}

/*
 * Check query @q against @scrape: each xdp_ratelimit_ metric it names has
 * samples, with each label its selector matches on; each label of its
 * by()/on() clauses is on one of its metrics. @names collects the metrics.
 */
static void check_query(const char *q, const char *scrape, FILE *names)
{
	char metrics[16][96], label[64], what[256];
	int nm = 0;
	const char *p = q;

	while ((p = strstr(p, "xdp_ratelimit_"))) {
		size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		const char *sel;

		snprintf(metrics[nm], sizeof(metrics[nm]), "%.*s", (int)n, p);
		fprintf(names, "%s\n", metrics[nm]);
		snprintf(what, sizeof(what), "the exporter serves %s (in: %s)", metrics[nm], q);
		ASSERT_TRUE(has_sample(scrape, metrics[nm], NULL), what);
		p += n;
		/* Its matchers: NAME op "value", comma-separated. */
		if (*p == '{') {
			for (sel = p + 1; *sel && *sel != '}';) {
				size_t ln = strspn(sel, "abcdefghijklmnopqrstuvwxyz_");

				snprintf(label, sizeof(label), "%.*s", (int)ln, sel);
				snprintf(what, sizeof(what), "%s has the label %s (in: %s)",
					 metrics[nm], label, q);
				if (!target_label(label))
					ASSERT_TRUE(has_sample(scrape, metrics[nm], label), what);
				sel = strchr(sel, '"');
				if (sel)
					sel = strchr(sel + 1, '"');
				if (!sel)
					break;
				sel += strspn(sel + 1, ", ") + 1;
			}
		}
		if (nm < 15)
			nm++;
	}
	/* by (a, b) and on (a, b): each label on one of the query's metrics at least. */
	for (p = q; (p = strpbrk(p, "bo"));) {
		const char *l;
		bool any;

		if (!(!strncmp(p, "by (", 4) || !strncmp(p, "on (", 4)) ||
		    (p > q && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
			p++;
			continue;
		}
		for (l = p + 4; *l && *l != ')';) {
			size_t ln = strspn(l, "abcdefghijklmnopqrstuvwxyz_");

			snprintf(label, sizeof(label), "%.*s", (int)ln, l);
			any = target_label(label);
			for (int i = 0; i < nm && !any; i++)
				any = has_sample(scrape, metrics[i], label);
			snprintf(what, sizeof(what), "label %s of by()/on() is served (in: %s)",
				 label, q);
			ASSERT_TRUE(any, what);
			l += ln;
			l += strspn(l, ", ");
			if (!ln)
				break;
		}
		p += 4;
	}
}

/* One scrape of a real exporter started for it on 127.0.0.1 (a port the kernel picks). */
static char *scrape(void)
{
	char *out = NULL;

	if (rl_sh(&out,
		  "log=$(mktemp /tmp/rlt-dash-XXXXXX) || exit 1; %s/xdp-ratelimit exporter --listen "
		  "127.0.0.1:0 >$log 2>&1 & pid=$!; "
		  "trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f $log' EXIT; "
		  "for i in $(seq 200); do port=$(sed -n 's|.*listening on http://127.0.0.1:"
		  "\\([0-9]*\\).*|\\1|p' $log); [ -n \"$port\" ] && break; sleep 0.025; done; "
		  "[ -n \"$port\" ] && curl -sf --max-time 5 http://127.0.0.1:$port/metrics",
		  rl_build_dir)) {
		free(out);
		return NULL;
	}
	return out;
}

TEST_FLAGS(dashboard_metrics, RL_TEST_ROOT)
{
	struct rl_flow f = { .src = "198.18.0.10", .count = 2000, .gap = "5us" };
	char *json = NULL, *body = NULL, *names = NULL, *rules = NULL, args[256], what[256];
	struct queries qs = {};
	size_t nlen = 0, rlen = 0;
	FILE *nf = NULL, *rf = NULL;
	bool share = false;
	struct rl_ns ns;
	int n_expr;

	json = slurp(DASHBOARD);
	if (!ASSERT_TRUE(json != NULL, "read " DASHBOARD " (run from the source tree)"))
		return;
	collect(json, "expr", &qs);
	n_expr = qs.n;
	collect(json, "query", &qs); /* the template variables' label_values() */
	ASSERT_TRUE(n_expr >= 20, "the panels' queries");
	ASSERT_CONTAINS(json, "\"type\": \"datasource\"", "a data source variable");
	ASSERT_CONTAINS(json, "\"uid\": \"${datasource}\"", "panels use the data source variable");

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespaces"))
		goto out;
	snprintf(args, sizeof(args), "attach %s --rate 1000 --burst 100", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach", args))
		goto out;
	snprintf(args, sizeof(args),
		 "rule add %s blk --src 198.18.0.10 --proto udp --rate 50 --burst 10 --block 60s",
		 ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "rule add", args) ||
	    !ASSERT_OK(rl_ns_rx_sh(&ns, NULL,
				   "ip link add " SHARE_IF " type veth peer name " SHARE_IF "p && "
				   "ip link set " SHARE_IF " up && ip link set " SHARE_IF "p up"),
		       "a second interface"))
		goto out;
	snprintf(args, sizeof(args), "attach " SHARE_IF " --share %s", ns.rx_if);
	if (!rl_ns_cli_ok(&ns, "attach --share", args))
		goto out;
	share = true;
	if (!ASSERT_OK(rl_flow_start(&ns, &f), "start the flow") ||
	    !ASSERT_OK(rl_flow_wait(&f), "the flow ran"))
		goto out;
	/* Nothing listens on the namespace's loopback: the agent falls back, and says so. */
	ASSERT_EQ(rl_sh(NULL,
			"nsenter --net=/run/netns/%s timeout -s TERM 0.5 %s/xdp-ratelimit sync %s "
			"--redis redis://127.0.0.1:9 >/dev/null 2>&1",
			ns.rx, rl_build_dir, ns.rx_if),
		  124, "the sync agent ran until timeout(1) stopped it");

	body = scrape();
	if (!ASSERT_TRUE(body && *body, "scrape the exporter"))
		goto out;
	ASSERT_TRUE(has_sample(body, "xdp_ratelimit_blocked_sources", "rule"), "a limit rule");
	ASSERT_TRUE(has_sample(body, "xdp_ratelimit_sync_state_info", "state"), "a sync status");
	ASSERT_TRUE(has_sample(body, "xdp_ratelimit_shares_limiter_info", "limiter"), "a share");

	nf = open_memstream(&names, &nlen);
	rf = open_memstream(&rules, &rlen);
	if (!ASSERT_TRUE(nf && rf, "memory"))
		goto out;
	fputc('\n', nf); /* each name between newlines */
	fprintf(rf, "groups:\n  - name: dashboard\n    rules:\n");
	for (int i = 0; i < qs.n; i++) {
		char *pq = promql(qs.q[i]);

		if (!ASSERT_TRUE(qs.q[i] && pq, "a query"))
			continue;
		check_query(qs.q[i], body, nf);
		/* A recording rule per query: promtool parses its expression. */
		fprintf(rf, "      - record: dashboard:q%d\n        expr: '%s'\n", i, pq);
		free(pq);
	}
	fclose(nf);
	nf = NULL;
	fclose(rf);
	rf = NULL;
	{
		char path[64] = "/tmp/rlt-dash-rules-XXXXXX", *err = NULL;
		int fd = mkstemp(path), rc = -1;
		char cmd[128];

		if (fd >= 0) {
			rc = write(fd, rules, rlen) == (ssize_t)rlen ? 0 : -1;
			close(fd);
			snprintf(cmd, sizeof(cmd), "promtool check rules %s", path);
			if (!rc)
				rc = rl_run(cmd, NULL, &err);
			unlink(path);
		}
		snprintf(what, sizeof(what), "promtool parses every query: %s", err ? err : "");
		ASSERT_EQ(rc, 0, what);
		free(err);
	}
	/* Most of what the exporter serves is on the dashboard: these at least. */
	{
		static const char *const must[] = {
			"xdp_ratelimit_packets_total",
			"xdp_ratelimit_limited_packets_total",
			"xdp_ratelimit_malformed_packets_total",
			"xdp_ratelimit_rule_decided_packets_total",
			"xdp_ratelimit_sync_up",
			"xdp_ratelimit_sync_state_info",
			"xdp_ratelimit_memory_bytes",
			"xdp_ratelimit_sources",
		};

		for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++) {
			char line[128];

			snprintf(line, sizeof(line), "\n%s\n", must[i]);
			snprintf(what, sizeof(what), "the dashboard shows %s", must[i]);
			ASSERT_TRUE(names && strstr(names, line), what);
		}
	}
out:
	if (nf)
		fclose(nf);
	if (rf)
		fclose(rf);
	if (share)
		rl_ns_cli(&ns, NULL, NULL, "detach " SHARE_IF);
	rl_ns_destroy(&ns);
	for (int i = 0; i < qs.n; i++)
		free(qs.q[i]);
	free(names);
	free(rules);
	free(body);
	free(json);
}
