// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * simulate --pcap: a capture replayed through the XDP program's own steps
 * (user/lib/replay.h: the kernel's parser, then the rules and the policy),
 * a verdict per frame; with --compare, a what-if report over several
 * policies in one pass (user/lib/whatif.h): for each, what it drops, the
 * sources it hurts most, and the drops over time, as text, as JSON, and
 * drawn by gnuplot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "apply.h"
#include "capture.h"
#include "cli.h"
#include "counters.h"
#include "json_writer.h"
#include "source.h"
#include "whatif.h"

/* Columns of the text plot: each is a stretch of the capture's time. */
#define PLOT_COLS 64
/* Points per line of the gnuplot plot. */
#define GNUPLOT_POINTS 256
/* A rule as the words of rule add, cut here in the text report (a long --src list). */
#define RULE_TEXT 160

/* Why a policy with SYN cookies is not replayed (see user/lib/replay.h). */
#define SYN_KERNEL_ONLY                                                                     \
	"SYN cookies are kernel-only (whether an ACK brings a valid cookie depends on the " \
	"kernel's secret and sockets, which a capture does not hold): compare the policy "  \
	"without them"

/* A policy to replay: its rules (default last), its --malformed, what the report calls it. */
struct cand {
	char label[RL_WHATIF_NAME_LEN];
	struct rl_ruleset set;
	bool malformed_drop;
};

static void cands_free(struct cand *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		if (c[i].set.rules)
			rl_ruleset_free(&c[i].set);
	free(c);
}

/*
 * The policies: the command line's (its options, --rules), unless --compare
 * is given without --rate and --rules; then each word after --compare. 0 or
 * 2 with a message.
 */
static int cands_load(const struct rl_args *a, struct cand **out, size_t *n)
{
	bool own = !a->compare || a->pol.rate_set || a->rules;
	struct cand *c = calloc((size_t)a->npos + 1, sizeof(*c));
	char err[RL_ERRLEN];
	size_t k = 0;

	*out = c;
	*n = 0;
	if (!c) {
		pr_err("out of memory");
		return 1;
	}
	if (own) {
		if (rl_policy_check(&a->pol, err, sizeof(err))) {
			pr_err("%s", err);
			return 2;
		}
		snprintf(c[0].label, sizeof(c[0].label), "%s",
			 a->compare ? "(the command's options)" : "policy");
		c[0].malformed_drop = a->o.malformed_drop;
		if (a->rules ? simulate_load_rules(a->rules, &a->pol, &a->o, &c[0].set) :
			       rl_ruleset_init(&c[0].set, &a->pol, &a->o, err, sizeof(err))) {
			if (!a->rules)
				pr_err("%s", err);
			return 2;
		}
		k = *n = 1;
	}
	for (int i = 0; i < a->npos; i++, k++) {
		struct rl_apply_iface ifc;

		if (rl_apply_load_policy(&ifc, a->pos[i], err, sizeof(err))) {
			pr_err("simulate: --compare: %s", err);
			return 2;
		}
		snprintf(c[k].label, sizeof(c[k].label), "%s", a->pos[i]);
		c[k].set = ifc.rules;
		c[k].malformed_drop = ifc.o.malformed_drop;
		*n = k + 1;
		/* Replayed without them, its numbers would be another policy's. */
		if (ifc.o.syn.n) {
			pr_err("simulate: --compare: %s: syn-cookies: " SYN_KERNEL_ONLY, a->pos[i]);
			return 2;
		}
	}
	for (size_t j = 0; j < *n; j++)
		for (size_t r = 0; r < c[j].set.n; r++)
			if (c[j].set.rules[r].action == RL_RULE_SYN) {
				pr_err("simulate: %s: rule %s is a syn-cookies rule: " SYN_KERNEL_ONLY,
				       j || !own ? c[j].label : a->rules, c[j].set.rules[r].name);
				return 2;
			}
	if (!*n) {
		pr_err("simulate: --compare: give the policies to compare (files, or inline as "
		       "'{rate: 500}'), or the policy options (see " RL_PROG " simulate --help)");
		return 2;
	}
	return 0;
}

static const char *time_str(__u64 ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%09llu", (unsigned long long)(ns / 1000000000ULL),
		 (unsigned long long)(ns % 1000000000ULL));
	return buf;
}

/* The source of a frame as its deciding rule keys it, or unmasked (ND), or "-". */
static const char *frame_source(const struct rl_frame *f, const struct rl_ruleset *set,
				const struct rl_replay_res *res, char *buf, size_t len)
{
	const struct rl_rule *r;

	if (res->limited) {
		r = &set->rules[res->r.rule];
		if (r->action == RL_RULE_LIMIT)
			return rl_key_str(&res->r.key, r->pol.prefix4, r->pol.prefix6, buf, len);
		return rl_key_str(&res->r.key, 32, 128, buf, len);
	}
	if (f->kind == RL_PARSED_ND)
		return rl_key_str(&f->pi.src, 32, 128, buf, len);
	return "-";
}

static void frame_out(const struct rl_capture_frame *cf, const struct rl_frame *f,
		      const struct cand *c, const struct rl_replay_res *res, bool rules,
		      struct rl_json *w)
{
	char t[32], buf[RL_KEY_STRLEN];
	const char *src = frame_source(f, &c->set, res, buf, sizeof(buf));
	const char *verdict = res->verdict == XDP_DROP ? "drop" : "allow";
	const char *rule = res->limited ? c->set.rules[res->r.rule].name : "-";

	time_str(cf->ns, t, sizeof(t));
	if (!w) {
		if (rules)
			printf("%s %s %s %s %s\n", t, src, verdict, rule, res->why);
		else
			printf("%s %s %s %s\n", t, src, verdict, res->why);
		return;
	}
	jw_start_object(w);
	jw_uint_field(w, "frame", cf->index);
	jw_string_field(w, "time", t);
	jw_string_field(w, "source", src);
	jw_string_field(w, "verdict", verdict);
	jw_string_field(w, "reason", res->why);
	if (rules)
		jw_string_field(w, "rule", rule);
	if (res->r.dry_run)
		jw_bool_field(w, "dry_run", true);
	jw_uint_field(w, "length", f->len);
	jw_end_object(w);
}

static __u64 counter(const struct rl_counters *c, size_t i)
{
	return *(const __u64 *)((const char *)c + rl_counter_table[i].off);
}

/* The counters the program would show (stats' names): all in JSON, those not 0 as text. */
static void counters_out(const struct rl_counters *c, struct rl_json *w, const char *indent)
{
	if (w) {
		jw_name(w, "counters");
		jw_start_object(w);
	}
	for (size_t i = 0; i < rl_counter_count; i++) {
		__u64 v = counter(c, i);

		if (w)
			jw_uint_field(w, rl_counter_table[i].name, v);
		else if (v || i < 6)
			printf("%s%-20s %llu\n", indent, rl_counter_table[i].name,
			       (unsigned long long)v);
	}
	if (w)
		jw_end_object(w);
}

static void capture_json(const char *path, const struct rl_capture *cap, const struct rl_whatif *wi,
			 struct rl_json *w)
{
	const struct rl_capture_stats *st = rl_capture_stats(cap);

	jw_name(w, "capture");
	jw_start_object(w);
	jw_string_field(w, "file", path);
	jw_string_field(w, "format", rl_capture_format(cap));
	jw_string_field(w, "linktype", rl_capture_linktype(cap));
	jw_uint_field(w, "records", st->records);
	jw_uint_field(w, "frames", st->frames);
	jw_uint_field(w, "outgoing_skipped", st->outgoing);
	jw_uint_field(w, "reordered", st->reordered);
	jw_uint_field(w, "first_ns", st->first_ns);
	jw_uint_field(w, "last_ns", st->last_ns);
	jw_uint_field(w, "ip_frames", wi->ip);
	jw_uint_field(w, "sources", wi->hosts.count);
	jw_end_object(w);
}

static void capture_text(const char *path, const struct rl_capture *cap, const struct rl_whatif *wi)
{
	const struct rl_capture_stats *st = rl_capture_stats(cap);
	time_t sec = (time_t)(st->first_ns / 1000000000ULL);
	char when[64] = "", extra[128] = "";
	struct tm tm;

	if (st->frames && gmtime_r(&sec, &tm))
		strftime(when, sizeof(when), ", from %Y-%m-%d %H:%M:%S UTC", &tm);
	if (st->outgoing || st->reordered)
		snprintf(extra, sizeof(extra), "; skipped %llu sent by the host, %llu out of order",
			 (unsigned long long)st->outgoing, (unsigned long long)st->reordered);
	printf("Capture %s (%s, %s): %llu frames over %.3f s%s%s\n", path, rl_capture_format(cap),
	       rl_capture_linktype(cap), (unsigned long long)st->frames,
	       (double)(st->last_ns - st->first_ns) / 1e9, when, extra);
	printf("  %llu IP frames from %zu source addresses; %llu others (not IP, ND, malformed)\n",
	       (unsigned long long)wi->ip, wi->hosts.count,
	       (unsigned long long)(st->frames - wi->ip));
}

static double pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The rules of @c, default last, as the words of rule add, one per line. */
static void rules_text(const struct cand *c)
{
	char buf[RULE_TEXT];

	for (size_t i = 0; i < c->set.n; i++) {
		size_t n = rl_rule_format(&c->set.rules[i], buf, sizeof(buf));

		printf("     %s%s\n", buf, n >= sizeof(buf) ? " ..." : "");
	}
	if (!c->malformed_drop)
		printf("     (--malformed pass)\n");
}

/* What a policy dropped, by reason: the default's limit, the rules', malformed frames. */
static void drops_text(const struct rl_whatif_cand *c)
{
	const struct rl_counters *k = &c->model.cnt;
	const struct rl_rsim *rs = &c->model.sim;
	__u64 malformed = 0, denied = 0, limited = 0, blocked = 0, would = 0;

	for (int i = 0; i < RL_BAD__COUNT; i++)
		malformed += k->malformed[i];
	/* The rules but default: the interface counts default's in its own counters. */
	for (size_t i = 0; i + 1 < rs->set->n; i++) {
		denied += rs->cnt[i].denied;
		limited += rs->cnt[i].limited;
		blocked += rs->cnt[i].blocked;
		would += rs->cnt[i].would_drop;
	}
	const struct {
		const char *what;
		__u64 n;
	} parts[] = {
		{ "over the default policy's limit", k->limited },
		{ "over rules' limits", limited },
		{ "blocked by rules", blocked },
		{ "denied by rules", denied },
		{ "malformed", c->model.malformed_drop ? malformed : 0 },
	};
	const char *sep = ": ";

	printf("   drops %llu frame%s", (unsigned long long)k->dropped, k->dropped == 1 ? "" : "s");
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (!parts[i].n)
			continue;
		printf("%s%llu %s", sep, (unsigned long long)parts[i].n, parts[i].what);
		sep = ", ";
	}
	if (k->would_drop || would)
		printf("; would drop %llu more (dry-run)",
		       (unsigned long long)(k->would_drop + would));
	printf("\n");
}

/* One glyph per share: ' ' none, then under 10, 25, 50, 75, 90 percent, then '#'. */
static char glyph(__u64 part, __u64 whole)
{
	static const char g[] = ".:-=+";
	static const unsigned int upto[] = { 10, 25, 50, 75, 90 };

	if (!part || !whole)
		return ' ';
	for (int i = 0; i < 5; i++)
		if (part * 100 < whole * upto[i])
			return g[i];
	return '#';
}

/* Sums of @b over columns of @per bins: column i is bins [i per, (i + 1) per). */
static __u64 colsum(const __u64 *b, size_t nbins, size_t per, size_t i)
{
	__u64 s = 0;

	for (size_t j = i * per; j < (i + 1) * per && j < nbins; j++)
		s += b[j];
	return s;
}

static void plot_text(const struct rl_whatif *wi)
{
	size_t per = (wi->nbins + PLOT_COLS - 1) / PLOT_COLS, ncols;
	__u64 peak = 0;

	if (!per)
		return;
	ncols = (wi->nbins + per - 1) / per;
	for (size_t i = 0; i < ncols; i++)
		if (colsum(wi->rx, wi->nbins, per, i) > peak)
			peak = colsum(wi->rx, wi->nbins, per, i);
	printf("\nDrops over time, %.3f s a column, from the first frame to %.3f s:\n",
	       (double)(per * wi->width) / 1e9, (double)(ncols * per * wi->width) / 1e9);
	printf("  %-12s|", "received");
	for (size_t i = 0; i < ncols; i++)
		putchar(glyph(colsum(wi->rx, wi->nbins, per, i), peak));
	printf("|  (of the busiest column: %llu frames)\n", (unsigned long long)peak);
	for (size_t c = 0; c < wi->n; c++) {
		printf("  %-12s|", "");
		for (size_t i = 0; i < ncols; i++)
			putchar(glyph(colsum(wi->c[c].drops, wi->nbins, per, i) +
					      colsum(wi->c[c].would, wi->nbins, per, i),
				      colsum(wi->rx, wi->nbins, per, i)));
		printf("|  policy %zu\n", c + 1);
	}
	printf("  Frames dropped (or that dry-run would drop), of the column's: ' ' none, '.' "
	       "under 10%%,\n  ':' under 25%%, '-' under 50%%, '=' under 75%%, '+' under 90%%, "
	       "'#' 90%% or more.\n");
}

static void report_text(const char *path, const struct rl_capture *cap, const struct rl_whatif *wi,
			const struct cand *cs, size_t top)
{
	const struct rl_src **v = calloc(top, sizeof(*v));
	char buf[RL_KEY_STRLEN];

	capture_text(path, cap, wi);
	printf("\n  %-26s %10s %7s %14s %7s %13s %8s\n", "POLICY", "DROPPED", "", "BYTES", "",
	       "SOURCES HIT", "CUT OFF");
	for (size_t i = 0; i < wi->n; i++) {
		const struct rl_counters *c = &wi->c[i].model.cnt;
		__u64 some, all;
		char label[27];

		rl_whatif_sources_hit(&wi->c[i], &some, &all);
		snprintf(label, sizeof(label), "%zu %s", i + 1, cs[i].label);
		printf("  %-26s %10llu %6.1f%% %14llu %6.1f%% %6llu of %-3zu %8llu\n", label,
		       (unsigned long long)c->dropped, pct(c->dropped, c->rx_packets),
		       (unsigned long long)c->dropped_bytes, pct(c->dropped_bytes, c->rx_bytes),
		       (unsigned long long)some, wi->hosts.count, (unsigned long long)all);
	}
	for (size_t i = 0; i < wi->n; i++) {
		const struct rl_whatif_cand *c = &wi->c[i];
		size_t k = v ? rl_whatif_top(c, v, top) : 0;

		printf("\n%zu %s\n", i + 1, cs[i].label);
		rules_text(&cs[i]);
		drops_text(c);
		if (!k)
			continue;
		printf("   %-40s %10s %10s %8s\n", "MOST AFFECTED SOURCES", "DROPPED", "PASSED",
		       "DROPPED");
		for (size_t j = 0; j < k; j++)
			printf("   %-40s %10llu %10llu %7.1f%%\n",
			       rl_key_str(&v[j]->key, 32, 128, buf, sizeof(buf)),
			       (unsigned long long)v[j]->dropped, (unsigned long long)v[j]->passed,
			       pct(v[j]->dropped, v[j]->dropped + v[j]->passed));
	}
	plot_text(wi);
	free(v);
}

static void series_json(struct rl_json *w, const char *name, const __u64 *b, size_t n)
{
	jw_name(w, name);
	jw_start_array(w);
	for (size_t i = 0; i < n; i++)
		jw_uint(w, b[i]);
	jw_end_array(w);
}

static void report_json(const char *path, const struct rl_capture *cap, const struct rl_whatif *wi,
			const struct cand *cs, size_t top, struct rl_json *w)
{
	const struct rl_src **v = calloc(top, sizeof(*v));
	char buf[RL_KEY_STRLEN];

	capture_json(path, cap, wi, w);
	jw_name(w, "timeline");
	jw_start_object(w);
	jw_uint_field(w, "start_ns", wi->t0);
	jw_uint_field(w, "bin_ns", wi->width);
	series_json(w, "received", wi->rx, wi->nbins);
	jw_end_object(w);
	jw_name(w, "policies");
	jw_start_array(w);
	for (size_t i = 0; i < wi->n; i++) {
		const struct rl_whatif_cand *c = &wi->c[i];
		size_t k = v ? rl_whatif_top(c, v, top) : 0;
		__u64 some, all;

		rl_whatif_sources_hit(c, &some, &all);
		jw_start_object(w);
		jw_string_field(w, "name", cs[i].label);
		jw_name(w, "rules");
		jw_start_array(w);
		for (size_t r = 0; r < cs[i].set.n; r++)
			rl_rule_json(w, &cs[i].set.rules[r]);
		jw_end_array(w);
		jw_string_field(w, "malformed", cs[i].malformed_drop ? "drop" : "pass");
		jw_uint_field(w, "dropped", c->model.cnt.dropped);
		jw_uint_field(w, "dropped_bytes", c->model.cnt.dropped_bytes);
		jw_uint_field(w, "would_drop", c->model.cnt.would_drop);
		jw_uint_field(w, "sources_hit", some);
		jw_uint_field(w, "sources_all_dropped", all);
		jw_name(w, "most_affected");
		jw_start_array(w);
		for (size_t j = 0; j < k; j++) {
			jw_start_object(w);
			jw_string_field(w, "source",
					rl_key_str(&v[j]->key, 32, 128, buf, sizeof(buf)));
			jw_uint_field(w, "dropped", v[j]->dropped);
			jw_uint_field(w, "passed", v[j]->passed);
			jw_end_object(w);
		}
		jw_end_array(w);
		series_json(w, "dropped_over_time", c->drops, wi->nbins);
		series_json(w, "would_drop_over_time", c->would, wi->nbins);
		counters_out(&c->model.cnt, w, "");
		jw_end_object(w);
	}
	jw_end_array(w);
	free(v);
}

/* Is @prog an executable in $PATH? */
static bool in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char dir[4096];

	for (; p && *p; p += strcspn(p, ":") + (p[strcspn(p, ":")] == ':')) {
		size_t n = strcspn(p, ":");

		snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, prog);
		if (n && !access(dir, X_OK))
			return true;
	}
	return false;
}

/* @s in a gnuplot single-quoted string: a quote is written twice. */
static void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/*
 * The frames received and each policy's drops per second over time, drawn
 * into @out (PNG) by gnuplot, fed a script with the data inline on its
 * standard input. 0, or 1 with a message.
 */
static int plot_png(const char *out, const char *path, const struct rl_whatif *wi,
		    const struct cand *cs)
{
	size_t per = (wi->nbins + GNUPLOT_POINTS - 1) / GNUPLOT_POINTS, n;
	double col;
	FILE *gp;
	int st;

	if (strchr(out, '\n') || strchr(path, '\n')) {
		pr_err("simulate: --plot: a file name with a newline");
		return 1;
	}
	if (!in_path("gnuplot")) {
		pr_err("simulate: --plot needs gnuplot, which is not installed (apt-get install "
		       "gnuplot-nox)");
		return 1;
	}
	if (!per)
		per = 1;
	n = (wi->nbins + per - 1) / per;
	col = (double)(per * wi->width) / 1e9;
	/* gnuplot's own messages go to our stderr. */
	fflush(stdout);
	gp = popen("gnuplot", "w");
	if (!gp) {
		pr_err("simulate: --plot: cannot run gnuplot: %s", strerror(errno));
		return 1;
	}
	fprintf(gp, "set terminal pngcairo size 1100,600 noenhanced\nset output ");
	gp_quote(gp, out);
	fprintf(gp, "\nset title ");
	gp_quote(gp, path);
	fprintf(gp, "\nset xlabel 'seconds from the first frame'\n"
		    "set ylabel 'frames per second'\nset key below Left reverse\n"
		    "set grid\n$d << EOD\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(gp, "%.9f %.3f", (double)i * col,
			(double)colsum(wi->rx, wi->nbins, per, i) / col);
		for (size_t c = 0; c < wi->n; c++)
			fprintf(gp, " %.3f",
				(double)(colsum(wi->c[c].drops, wi->nbins, per, i) +
					 colsum(wi->c[c].would, wi->nbins, per, i)) /
					col);
		fputc('\n', gp);
	}
	fprintf(gp, "EOD\nplot $d using 1:2 with steps lw 2 title 'received'");
	for (size_t c = 0; c < wi->n; c++) {
		char t[RL_WHATIF_NAME_LEN + 32];

		snprintf(t, sizeof(t), "%zu %.48s: dropped%s", c + 1, cs[c].label,
			 wi->c[c].model.cnt.would_drop ? " (dry-run: would drop)" : "");
		fprintf(gp, ", '' using 1:%zu with steps title ", c + 3);
		gp_quote(gp, t);
	}
	fprintf(gp, "\n");
	st = pclose(gp);
	if (st) {
		pr_err("simulate: --plot: gnuplot failed (status %d) drawing '%s'", st, out);
		return 1;
	}
	return 0;
}

/* Exit status 1 for a capture that cannot be replayed, as for a malformed trace. */
static int snapped(const char *path, const struct rl_capture_frame *cf, const struct rl_frame *f)
{
	pr_err("capture '%s': record %llu: %u of the frame's %u bytes were captured, and the "
	       "parser reads up to byte %u of it: replay needs the headers of every frame "
	       "(capture with a larger snap length: tcpdump -s 0, its default)",
	       path, (unsigned long long)cf->index, cf->caplen, cf->len, f->want);
	return 1;
}

int cmd_simulate_pcap(const struct rl_args *a)
{
	struct rl_json jw, *w = a->json ? &jw : NULL;
	bool rules = a->rules != NULL, report = a->compare;
	size_t ncand = 0, top = a->top_n;
	struct rl_capture *cap = NULL;
	struct rl_capture_frame cf;
	char err[RL_ERRLEN];
	struct rl_whatif wi;
	struct cand *cs = NULL;
	struct rl_frame f;
	int ret = 0, r;

	if (a->trace) {
		pr_err("simulate: give --trace or --pcap, not both");
		return 2;
	}
	if (a->npos && !report) {
		pr_err("simulate: unexpected argument '%s' (the policies to compare follow "
		       "--compare)",
		       a->pos[0]);
		return 2;
	}
	if (!report && (a->plot || simulate_given(a, "sources"))) {
		pr_err("simulate: %s is an option of --compare", a->plot ? "--plot" : "--sources");
		return 2;
	}
	if (report && (a->summary || a->quiet)) {
		pr_err("simulate: --compare prints a report: %s means nothing with it",
		       a->summary ? "--summary" : "--quiet");
		return 2;
	}
	rl_whatif_init(&wi);
	ret = cands_load(a, &cs, &ncand);
	if (ret)
		goto out;
	for (size_t i = 0; i < ncand; i++)
		if (rl_whatif_add(&wi, cs[i].label, &cs[i].set, cs[i].malformed_drop)) {
			/* SYN cookies were refused above: what is left is memory. */
			pr_err("out of memory");
			ret = 1;
			goto out;
		}
	if (rl_capture_open(&cap, a->pcap, err, sizeof(err))) {
		pr_err("%s", err);
		ret = 1;
		goto out;
	}
	if (w) {
		jw_init(w, stdout);
		jw_start_object(w);
		if (!report) {
			simulate_policy_json(&a->pol, &cs[0].set.rules[cs[0].set.n - 1].params,
					     cs[0].set.rules[cs[0].set.n - 1].lvl, w);
			jw_name(w, "packets");
			jw_start_array(w);
		}
		/* The document has begun: a capture's error ends it validly and goes to stderr. */
		rl_json_errors = false;
	}
	while ((r = rl_capture_next(cap, &cf, err, sizeof(err))) > 0) {
		if (rl_whatif_frame(&wi, cf.data, cf.caplen, cf.len, cf.ns, &f)) {
			pr_err("out of memory at record %llu", (unsigned long long)cf.index);
			ret = 1;
			break;
		}
		if (f.snapped) {
			ret = snapped(a->pcap, &cf, &f);
			break;
		}
		if (!report && !a->quiet)
			frame_out(&cf, &f, &cs[0], &wi.c[0].last, rules, w);
	}
	if (r < 0) {
		pr_err("%s", err);
		ret = 1;
	}
	if (w) {
		if (!report) {
			jw_end_array(w);
			if (rules && !ret)
				simulate_rule_totals(&wi.c[0].model.sim, w);
			if (a->summary && !ret && !rules)
				simulate_sources(
					&wi.c[0].model.sim.tabs[0], cs[0].set.rules[0].pol.prefix4,
					cs[0].set.rules[0].pol.prefix6, wi.c[0].model.cnt.passed,
					wi.c[0].model.cnt.dropped, w);
			if (!ret) {
				capture_json(a->pcap, cap, &wi, w);
				counters_out(&wi.c[0].model.cnt, w, "");
			}
		} else if (!ret) {
			report_json(a->pcap, cap, &wi, cs, top, w);
		}
		jw_end_object(w);
		jw_end(w);
	} else if (!ret && report) {
		report_text(a->pcap, cap, &wi, cs, top);
	} else if (!ret && a->summary) {
		if (rules)
			simulate_rule_totals(&wi.c[0].model.sim, NULL);
		else
			simulate_sources(&wi.c[0].model.sim.tabs[0], cs[0].set.rules[0].pol.prefix4,
					 cs[0].set.rules[0].pol.prefix6, wi.c[0].model.cnt.passed,
					 wi.c[0].model.cnt.dropped, NULL);
		printf("\n");
		capture_text(a->pcap, cap, &wi);
		counters_out(&wi.c[0].model.cnt, NULL, "  ");
	}
	if (!ret && report && a->plot)
		ret = plot_png(a->plot, a->pcap, &wi, cs);
out:
	rl_capture_close(cap);
	rl_whatif_free(&wi);
	cands_free(cs, (size_t)a->npos + 1);
	return ret;
}
