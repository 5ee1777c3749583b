// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The simulate command, run as a user runs it: the built xdp-ratelimit binary
 * on trace files and standard input. What it prints is checked against
 * hand-computed answers, and, on random traces, against the rate core called
 * in-process (which test_algo.c checks against the spec).
 *
 * Output: "TIMESTAMP SOURCE allow|drop" per packet, the timestamp exactly as
 * written and the source masked to its prefix ('-' without one); --summary
 * adds a table, --json makes it one JSON object. Bad traces exit 1, bad
 * options 2, with a message on stderr that names the problem.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "opts.h"
#include "test.h"
#include "source.h"
#include "trace.h"

#define NSEC	      1000000000ULL
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *bin(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/xdp-ratelimit", rl_build_dir);
	return path;
}

static bool have_bin(void)
{
	if (access(bin(), X_OK)) {
		rl_test_fail(__FILE__, __LINE__, "%s is not built (make BUILD=%s %s)", bin(),
			     rl_build_dir, bin());
		return false;
	}
	return true;
}

/* A new temporary file holding @text; its name in @path. */
static bool tmp_file(const char *text, char *path, size_t len)
{
	size_t n = strlen(text), off = 0;
	int fd;

	snprintf(path, len, "/tmp/rl-test-sim-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0) {
		rl_test_fail(__FILE__, __LINE__, "mkstemp failed");
		return false;
	}
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);

		if (w <= 0) {
			rl_test_fail(__FILE__, __LINE__, "writing %s failed", path);
			close(fd);
			unlink(path);
			return false;
		}
		off += (size_t)w;
	}
	close(fd);
	return true;
}

/*
 * Run "xdp-ratelimit simulate @args" with @trace in a file given by --trace
 * (or, with @how, substituted for %s in a shell form such as "< %s").
 * Returns the exit status; @out and @err (if given) get stdout and stderr,
 * which the caller frees.
 */
static int simulate_how(const char *args, const char *trace, const char *how, char **out,
			char **err)
{
	char path[64], redir[128], *cmd;
	int ret;

	if (out)
		*out = NULL;
	if (err)
		*err = NULL;
	if (!tmp_file(trace, path, sizeof(path)))
		return -1;
	if (how)
		snprintf(redir, sizeof(redir), how, path);
	else
		snprintf(redir, sizeof(redir), "--trace %s", path);
	if (how && !strncmp(how, "cat", 3)) {
		if (asprintf(&cmd, "%s | %s simulate %s", redir, bin(), args) < 0)
			cmd = NULL;
	} else if (asprintf(&cmd, "%s simulate %s %s", bin(), args, redir) < 0) {
		cmd = NULL;
	}
	ret = cmd ? rl_run(cmd, out, err) : -1;
	free(cmd);
	unlink(path);
	return ret;
}

static int simulate(const char *args, const char *trace, char **out, char **err)
{
	return simulate_how(args, trace, NULL, out, err);
}

static unsigned int count_str(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Split @text into lines, in place. Returns how many (at most @max). */
static size_t split_lines(char *text, char **lines, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	return n;
}

/* A growable string. */
struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n >= 0 && b->s && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap ? 2 * b->cap + (size_t)n : 4096;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			abort();
	}
}

/* ---------------------------------------------------------------------------
 * Output.
 */

/* The spec's known case: after 5 s idle, 30 packets spread evenly over 20 ms. */
TEST(sim_known_case)
{
	static const struct {
		const char *args;
		unsigned int allow;
	} cases[] = {
		{ "--algo token-bucket --rate 10 --burst 20", 20 },
		{ "--algo gcra --rate 10 --burst 20", 21 },
		{ "--algo fixed-window --rate 10 --window 1s", 10 },
		{ "--algo sliding-window --rate 10 --window 1s", 10 },
	};
	struct buf trace = {};
	char *out, *err;

	if (!have_bin())
		return;
	for (int i = 0; i < 30; i++) {
		__u64 t = 5 * NSEC + i * 20000000ULL / 29;

		buf_add(&trace, "%llu.%09llu 198.18.0.1\n", t / NSEC, t % NSEC);
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret = simulate(cases[i].args, trace.s, &out, &err);

		ASSERT_EQ(ret, 0, cases[i].args);
		ASSERT_EQ(count_str(out, " allow\n"), cases[i].allow, cases[i].args);
		ASSERT_EQ(count_str(out, " drop\n"), 30 - cases[i].allow, cases[i].args);
		/* All of these pass the first packets, then drop the rest. */
		if (out && cases[i].allow < 30) {
			char *first_drop = strstr(out, " drop\n");
			unsigned int before = 0;

			for (char *p = out; p < first_drop; p++)
				before += *p == '\n';
			ASSERT_EQ(before, cases[i].allow, "allows come first");
		}
		ASSERT_STREQ(err, "", "nothing on stderr");
		free(out);
		free(err);
	}
	free(trace.s);
}

TEST(sim_output_format)
{
	const char *trace = "5 198.18.0.1\n"
			    "5.000000001 198.18.0.77\n"
			    "0005.10 198.18.1.1\n"
			    "5.2\n"
			    "5.2 198.18.0.1 100\n"
			    "6.500000000 2001:db8::1\n"
			    "6.5 2001:db8::ffff\n"
			    "7. 198.18.0.255\n";
	const char *want = "5 198.18.0.0/24 allow\n" /* 2 tokens -> 1 */
			   "5.000000001 198.18.0.0/24 allow\n" /* same /24 -> 0 */
			   "0005.10 198.18.1.0/24 allow\n" /* another /24 */
			   "5.2 - allow\n" /* no source: '-' */
			   "5.2 198.18.0.0/24 drop\n" /* 0.199999999 tokens */
			   "6.500000000 2001:db8::/64 allow\n"
			   "6.5 2001:db8::/64 allow\n" /* same /64: 2 -> 1 -> 0 */
			   "7. 198.18.0.0/24 allow\n"; /* 0.2 + 1.8 tokens */
	char *out, *err;

	if (!have_bin())
		return;
	ASSERT_EQ(simulate("--rate 1 --burst 2 --prefix4 24", trace, &out, &err), 0, "exit");
	ASSERT_STREQ(out, want, "per-packet lines");
	ASSERT_STREQ(err, "", "stderr");
	free(out);
	free(err);
	/* Default prefixes: IPv4 /32 (printed bare), IPv6 /64. */
	ASSERT_EQ(simulate("--rate 1 --burst 1", "1 198.18.0.1\n1 198.18.0.2\n1 198.18.0.1\n", &out,
			   NULL),
		  0, "exit");
	ASSERT_STREQ(out, "1 198.18.0.1 allow\n1 198.18.0.2 allow\n1 198.18.0.1 drop\n",
		     "IPv4 /32");
	free(out);
}

/*
 * A source pool with the names simulate should print: under the default
 * prefixes, under --prefix4 24, and under --prefix6 128.
 */
static const struct {
	const char *addr;
	const char *name, *name24, *name128;
} pool[] = {
	{ "198.18.0.1", "198.18.0.1", "198.18.0.0/24", "198.18.0.1" },
	{ "198.18.0.2", "198.18.0.2", "198.18.0.0/24", "198.18.0.2" },
	{ "198.18.7.200", "198.18.7.200", "198.18.7.0/24", "198.18.7.200" },
	{ "2001:db8::1", "2001:db8::/64", "2001:db8::/64", "2001:db8::1" },
	{ "2001:db8::2:3", "2001:db8::/64", "2001:db8::/64", "2001:db8::2:3" },
	{ "2001:db8:0:9::1", "2001:db8:0:9::/64", "2001:db8:0:9::/64", "2001:db8:0:9::1" },
	{ NULL, "-", "-", "-" },
};

struct gen_pkt {
	__u64 ns;
	char time[40];
	unsigned int src;
	__u32 len; /* 0: none written */
};

/* A timestamp for @ns, written one of the ways that mean exactly @ns. */
static void fmt_time(__u64 *rs, __u64 ns, char *buf, size_t len)
{
	__u64 s = ns / NSEC, f = ns % NSEC;
	int n;

	if (!f) {
		static const char *const tails[] = { "", ".", ".0", ".000000000" };

		snprintf(buf, len, "%llu%s", s, tails[rl_rand_below(rs, 4)]);
		return;
	}
	n = snprintf(buf, len, "%llu.%09llu", s, f);
	/* Trailing zeros may go. */
	while (rl_rand_below(rs, 2) && buf[n - 1] == '0')
		buf[--n] = '\0';
}

static size_t gen_trace(__u64 *rs, struct gen_pkt *p, size_t n, struct buf *text)
{
	__u64 t = rl_rand_below(rs, 1000000) * NSEC + rl_rand_below(rs, NSEC);

	for (size_t i = 0; i < n; i++) {
		switch (rl_rand_below(rs, 8)) {
		case 0:
		case 1:
			break;
		case 2:
			t += 1;
			break;
		case 3:
			t += rl_rand_below(rs, 1000000);
			break;
		case 4:
		case 5:
			t += rl_rand_below(rs, 300000000);
			break;
		default:
			t += rl_rand_below(rs, 5 * NSEC);
			break;
		}
		p[i].ns = t;
		fmt_time(rs, t, p[i].time, sizeof(p[i].time));
		p[i].src =
			(unsigned int)(rl_rand_below(rs, 3) ? rl_rand_below(rs, 2) :
							      rl_rand_below(rs, ARRAY_SIZE(pool)));
		p[i].len = 0;
		if (pool[p[i].src].addr && rl_rand_below(rs, 4))
			p[i].len =
				(__u32)(rl_rand_below(rs, 3) ? 1 + rl_rand_below(rs, 1600) : 65535);
		if (!pool[p[i].src].addr)
			buf_add(text, "%s\n", p[i].time);
		else if (!p[i].len)
			buf_add(text, "%s %s\n", p[i].time, pool[p[i].src].addr);
		else
			buf_add(text, "%s%s%s %u\n", p[i].time, rl_rand_below(rs, 2) ? " " : "\t",
				pool[p[i].src].addr, p[i].len);
	}
	return n;
}

/* The verdicts of the in-process core for the packets, under policy @args. */
static bool core_verdicts(const char *args, const struct gen_pkt *p, size_t n, int *verdict)
{
	const char *words[32];
	char copy[256], *save = NULL, err[RL_ERRLEN];
	struct rl_policy pol;
	struct rl_sim s;
	int n_words = 0;

	snprintf(copy, sizeof(copy), "%s", args);
	for (char *a = strtok_r(copy, " ", &save); a && n_words < 31;
	     a = strtok_r(NULL, " ", &save))
		words[n_words++] = a;
	words[n_words] = NULL;
	if (rl_policy_parse(&pol, NULL, words, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "%s: %s", args, err);
		return false;
	}
	if (rl_sim_init(&s, &pol, err, sizeof(err))) {
		rl_test_fail(__FILE__, __LINE__, "%s: %s", args, err);
		rl_sim_free(&s);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		struct rl_key k;

		if (pool[p[i].src].addr)
			rl_key_parse(pool[p[i].src].addr, &k);
		else
			rl_key_anon(&k);
		verdict[i] = rl_sim_packet(&s, &k, p[i].ns, p[i].len ? p[i].len : 64, NULL);
	}
	rl_sim_free(&s);
	return true;
}

static const char *const sim_policies[] = {
	"--rate 10 --burst 20",
	"--algo gcra --rate 3 --burst 2 --prefix4 24",
	"--algo fixed-window --rate 160kbit --window 100ms",
	"--algo sliding-window --rate 7 --window 3s --prefix6 128",
	"--rate 1mbit --burst 3000 --prefix4 24",
	"--algo gcra --rate 12345678 --burst 5",
	"--algo sliding-window --rate 100kbyte --window 20ms --prefix4 24 --prefix6 128",
};

static const char *pool_name(unsigned int src, const char *args)
{
	if (strstr(args, "--prefix4 24") && pool[src].addr && !strchr(pool[src].addr, ':'))
		return pool[src].name24;
	if (strstr(args, "--prefix6 128") && pool[src].addr && strchr(pool[src].addr, ':'))
		return pool[src].name128;
	return pool[src].name;
}

#define NPKT 300

/* On random traces, simulate prints exactly what the core decides. */
TEST(sim_matches_core)
{
	static struct gen_pkt p[NPKT];
	static int verdict[NPKT];
	static char *lines[NPKT + 8];
	__u64 rs = rl_test_seed() ^ 0x51u;

	if (!have_bin())
		return;
	for (size_t c = 0; c < ARRAY_SIZE(sim_policies); c++) {
		const char *args = sim_policies[c];
		struct buf text = {};
		char *out, *err;
		size_t n;
		int ret;

		gen_trace(&rs, p, NPKT, &text);
		if (!core_verdicts(args, p, NPKT, verdict)) {
			free(text.s);
			continue;
		}
		ret = simulate(args, text.s, &out, &err);
		if (!ASSERT_EQ(ret, 0, args) || !ASSERT_STREQ(err, "", args)) {
			free(out);
			free(err);
			free(text.s);
			continue;
		}
		n = split_lines(out, lines, ARRAY_SIZE(lines));
		ASSERT_EQ(n, NPKT, "one line per packet");
		for (size_t i = 0; i < n && i < NPKT; i++) {
			char want[128];

			snprintf(want, sizeof(want), "%s %s %s", p[i].time,
				 pool_name(p[i].src, args), verdict[i] ? "allow" : "drop");
			if (!ASSERT_STREQ(lines[i], want, args)) {
				fprintf(stderr, "    at packet %zu (RL_SEED=%llu)\n", i,
					rl_test_seed());
				break;
			}
		}
		free(out);
		free(err);
		free(text.s);
	}
}

struct row {
	char name[64];
	unsigned long long passed, dropped;
};

/* The --summary table (after a blank line): rows and the total. Returns rows, or -1. */
static int parse_summary(const char *out, struct row *rows, int max, struct row *total)
{
	const char *p = strstr(out ? out : "", "\nSOURCE");
	char line[256];
	int n = 0;

	if (!p)
		return -1;
	p = strchr(p + 1, '\n');
	while (p && *++p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct row r;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (sscanf(line, "%63s %llu %llu", r.name, &r.passed, &r.dropped) != 3)
			return -1;
		if (!strcmp(r.name, "total")) {
			*total = r;
			return n;
		}
		if (n < max)
			rows[n++] = r;
		p = nl;
	}
	return -1;
}

TEST(sim_summary)
{
	static struct gen_pkt p[NPKT];
	static int verdict[NPKT];
	__u64 rs = rl_test_seed() ^ 0x52u;
	const char *args = "--algo gcra --rate 3 --burst 2 --prefix4 24";
	struct buf text = {};
	struct row rows[16], total = {}, want[16];
	int nwant = 0, n;
	char *out, *err;

	if (!have_bin())
		return;
	gen_trace(&rs, p, NPKT, &text);
	if (!core_verdicts(args, p, NPKT, verdict))
		goto out;
	/* Expected rows: one per source name, in first-seen order. */
	memset(want, 0, sizeof(want));
	for (size_t i = 0; i < NPKT; i++) {
		const char *name = pool_name(p[i].src, args);
		int k;

		for (k = 0; k < nwant && strcmp(want[k].name, name); k++)
			;
		if (k == nwant)
			snprintf(want[nwant++].name, sizeof(want[0].name), "%s", name);
		want[k].passed += verdict[i] == 1;
		want[k].dropped += verdict[i] != 1;
	}
	for (int q = 0; q < 2; q++) {
		const char *extra = q ? "--summary --quiet" : "--summary";
		char a[256];

		snprintf(a, sizeof(a), "%s %s", args, extra);
		ASSERT_EQ(simulate(a, text.s, &out, &err), 0, extra);
		ASSERT_STREQ(err, "", extra);
		if (q)
			ASSERT_EQ(count_str(out, " allow\n") + count_str(out, " drop\n"), 0,
				  "--quiet: no per-packet lines");
		else
			ASSERT_EQ(count_str(out, " allow\n") + count_str(out, " drop\n"), NPKT,
				  "per-packet lines too");
		n = parse_summary(out, rows, 16, &total);
		if (ASSERT_EQ(n, nwant, "rows in the table")) {
			unsigned long long tp = 0, td = 0;

			for (int k = 0; k < n; k++) {
				ASSERT_STREQ(rows[k].name, want[k].name, "first-seen order");
				ASSERT_EQ(rows[k].passed, want[k].passed, rows[k].name);
				ASSERT_EQ(rows[k].dropped, want[k].dropped, rows[k].name);
				tp += rows[k].passed;
				td += rows[k].dropped;
			}
			ASSERT_EQ(total.passed, tp, "total passed");
			ASSERT_EQ(total.dropped, td, "total dropped");
			ASSERT_EQ(total.passed + total.dropped, NPKT, "every packet counted");
		} else {
			fprintf(stderr, "    output: %s\n", out ? out : "(null)");
		}
		free(out);
		free(err);
	}
out:
	free(text.s);
}

/* python3 available? (for JSON validation) */
static bool have_python(void)
{
	if (rl_run("python3 -c 'import json'", NULL, NULL)) {
		rl_test_skip("python3 is not installed");
		return false;
	}
	return true;
}

/* Run python3 @script on the text @json (as its stdin); the exit status, output in @out. */
static int python_on(const char *script, const char *json, char **out, char **err)
{
	char path[64], *cmd;
	int ret;

	if (!tmp_file(json ? json : "", path, sizeof(path)))
		return -1;
	if (asprintf(&cmd, "python3 -c '%s' < %s", script, path) < 0)
		cmd = NULL;
	ret = cmd ? rl_run(cmd, out, err) : -1;
	free(cmd);
	unlink(path);
	return ret;
}

/*
 * Each JSON document (the files named, or stdin) as the text simulate prints:
 * the packet lines, the summary table, then the policy; a form feed after each.
 */
static const char json_to_text[] =
	"import json, sys\n"
	"for f in sys.argv[1:] or [\"/dev/stdin\"]:\n"
	"    d = json.load(open(f))\n"
	"    for p in d[\"packets\"]:\n"
	"        print(p[\"time\"], p[\"source\"], p[\"verdict\"])\n"
	"    if \"summary\" in d:\n"
	"        print()\n"
	"        print(\"SOURCE PASSED DROPPED\")\n"
	"        for s in d[\"summary\"][\"sources\"]:\n"
	"            print(s[\"source\"], s[\"passed\"], s[\"dropped\"])\n"
	"        print(\"total\", d[\"summary\"][\"passed\"], d[\"summary\"][\"dropped\"])\n"
	"    pol = d[\"policy\"]\n"
	"    print(\"policy\", \" \".join(\"%s=%s\" % (k, pol[k]) for k in sorted(pol)))\n"
	"    print(\"\\f\")\n";

/* "a  b   c" -> "a b c", in place, for comparing tables whatever their spacing. */
static void squeeze(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++)
		if (*r != ' ' || (w > s && w[-1] != ' ' && w[-1] != '\n'))
			*w++ = *r;
	*w = '\0';
	for (char *p = s; (p = strstr(p, " \n"));)
		memmove(p, p + 1, strlen(p));
}

TEST(sim_json)
{
	enum { N = ARRAY_SIZE(sim_policies) };
	static struct gen_pkt p[NPKT];
	char *txt[N] = {}, *js[N] = {}, path[N][64], *conv = NULL, *err = NULL, *cmd, *doc;
	__u64 rs = rl_test_seed() ^ 0x53u;
	struct buf files = {};
	size_t made = 0;

	if (!have_bin() || !have_python())
		return;
	for (size_t c = 0; c < N; c++) {
		struct buf text = {};
		char a[256];

		gen_trace(&rs, p, NPKT, &text);
		snprintf(a, sizeof(a), "%s --summary", sim_policies[c]);
		ASSERT_EQ(simulate(a, text.s, &txt[c], NULL), 0, "text");
		snprintf(a, sizeof(a), "%s --summary --json", sim_policies[c]);
		ASSERT_EQ(simulate(a, text.s, &js[c], NULL), 0, "json");
		free(text.s);
		if (!tmp_file(js[c] ? js[c] : "", path[c], sizeof(path[c])))
			goto out;
		made++;
		buf_add(&files, " %s", path[c]);
	}
	/* One python3 for all (each start costs a fifth of a second here). */
	if (asprintf(&cmd, "python3 -m json.tool %s > /dev/null", path[0]) >= 0) {
		ASSERT_EQ(rl_run(cmd, NULL, NULL), 0, "python3 -m json.tool");
		free(cmd);
	}
	if (asprintf(&cmd, "python3 -c '%s' %s", json_to_text, files.s) >= 0) {
		ASSERT_EQ(rl_run(cmd, &conv, &err), 0,
			  "every document is valid JSON with packets, summary and policy");
		ASSERT_STREQ(err, "", "python");
		free(cmd);
	}
	doc = conv;
	for (size_t c = 0; c < N && doc; c++) {
		const char *args = sim_policies[c];
		char *next = strstr(doc, "\f\n"), *pol;

		if (!ASSERT_TRUE(next != NULL, "a document per policy"))
			break;
		*next = '\0';
		pol = strstr(doc, "policy ");
		if (ASSERT_TRUE(pol && txt[c], args)) {
			ASSERT_CONTAINS(pol,
					strstr(args, "gcra")	? "algo=gcra" :
					strstr(args, "fixed")	? "algo=fixed-window" :
					strstr(args, "sliding") ? "algo=sliding-window" :
								  "algo=token-bucket",
					"policy algo");
			ASSERT_CONTAINS(pol,
					strstr(args, "prefix4 24") ? "prefix4=24" : "prefix4=32",
					"policy prefix4");
			ASSERT_CONTAINS(pol,
					strstr(args, "prefix6 128") ? "prefix6=128" : "prefix6=64",
					"policy prefix6");
			if (strstr(args, "--burst"))
				ASSERT_CONTAINS(pol,
						strstr(args, "--burst 20")   ? "burst=20" :
						strstr(args, "--burst 3000") ? "burst=3000" :
						strstr(args, "--burst 2")    ? "burst=2" :
									       "burst=5",
						"policy burst");
			if (strstr(args, "fixed-window"))
				ASSERT_CONTAINS(pol, "limit=2000 ", "160kbit x 100ms = 2000 bytes");
			/* The same verdicts and summary as the text output. */
			*pol = '\0';
			squeeze(doc);
			squeeze(txt[c]);
			ASSERT_STREQ(doc, txt[c], args);
		}
		doc = next + 2;
	}
out:
	for (size_t c = 0; c < N; c++) {
		if (c < made)
			unlink(path[c]);
		free(txt[c]);
		free(js[c]);
	}
	free(files.s);
	free(conv);
	free(err);
}

TEST(sim_json_quiet_and_errors)
{
	char *js, *conv, *err;

	if (!have_bin() || !have_python())
		return;
	/* --quiet: no packets, the summary still. */
	ASSERT_EQ(simulate("--rate 1 --burst 1 --json --summary --quiet",
			   "1 10.0.0.1\n1 10.0.0.1\n2 10.0.0.2\n", &js, NULL),
		  0, "exit");
	ASSERT_EQ(python_on(json_to_text, js, &conv, NULL), 0, "valid JSON");
	ASSERT_CONTAINS(conv, "\nSOURCE PASSED DROPPED\n10.0.0.1 1 1\n10.0.0.2 1 0\ntotal 2 1\n",
			"summary");
	ASSERT_TRUE(conv && conv[0] == '\n', "no packets");
	free(js);
	free(conv);
	/* A bad trace line: still valid JSON on stdout, the error on stderr, exit 1. */
	ASSERT_EQ(simulate("--rate 1 --json", "1 10.0.0.1\nbad\n", &js, &err), 1, "exit");
	ASSERT_CONTAINS(err, "line 2", "stderr");
	ASSERT_EQ(python_on(json_to_text, js, &conv, NULL), 0, "valid JSON after an error");
	ASSERT_CONTAINS(conv, "1 10.0.0.1 allow\n", "packets before the error");
	free(js);
	free(conv);
	free(err);
}

TEST(sim_trace_file_vs_stdin)
{
	static const char *const how[] = { "--trace %s", "--trace=%s", "--trace - < %s", "< %s",
					   "cat %s" };
	const char *trace = "1 10.0.0.1\n1.5 10.0.0.1\n1.5 10.0.0.2 1500\n1.75 10.0.0.1\n2\n";
	char *ref = NULL;

	if (!have_bin())
		return;
	for (size_t i = 0; i < ARRAY_SIZE(how); i++) {
		char *out, *err;

		ASSERT_EQ(simulate_how("--rate 2 --burst 1", trace, how[i], &out, &err), 0, how[i]);
		ASSERT_STREQ(err, "", how[i]);
		if (!i)
			ASSERT_STREQ(out,
				     "1 10.0.0.1 allow\n1.5 10.0.0.1 allow\n1.5 10.0.0.2 allow\n"
				     "1.75 10.0.0.1 drop\n2 - allow\n",
				     "verdicts");
		else
			ASSERT_STREQ(out, ref, how[i]);
		if (!i)
			ref = out;
		else
			free(out);
		free(err);
	}
	free(ref);
}

TEST(sim_comments_blank)
{
	const char *trace = "# a trace\n"
			    "\n"
			    "   \n"
			    "\t\n"
			    "1 10.0.0.1   # the first packet\n"
			    "  1.5\t10.0.0.1  \n"
			    "#2 10.0.0.1\n"
			    "2 10.0.0.1 64\r\n"
			    "2.000000001 10.0.0.1\r\n"
			    "# the end\n"
			    "3 10.0.0.1"; /* no newline at the end */
	char *out, *err;

	if (!have_bin())
		return;
	ASSERT_EQ(simulate("--rate 1 --burst 2", trace, &out, &err), 0, "exit");
	ASSERT_STREQ(out,
		     "1 10.0.0.1 allow\n1.5 10.0.0.1 allow\n2 10.0.0.1 allow\n"
		     "2.000000001 10.0.0.1 drop\n3 10.0.0.1 allow\n",
		     "comments, blanks, whitespace and CRLF ignored");
	ASSERT_STREQ(err, "", "stderr");
	free(out);
	free(err);
	/* Blank and comment lines still count for line numbers. */
	ASSERT_EQ(simulate("--rate 1", "# one\n\n1\n# four\n\nnot-a-time\n", NULL, &err), 1,
		  "exit");
	ASSERT_CONTAINS(err, "line 6", "line number counts every line");
	ASSERT_CONTAINS(err, "not-a-time", "names the bad timestamp");
	free(err);
}

TEST(sim_byte_mode)
{
	/* 12kbit = 1500 bytes/s, burst 3000. */
	const char *trace = "0 10.0.0.1 1500\n"
			    "0 10.0.0.1 1500\n"
			    "0 10.0.0.1 1500\n"
			    "0.999999999 10.0.0.1 1500\n"
			    "1 10.0.0.1 1500\n"
			    "1 10.0.0.1 64\n"
			    "1.042666666 10.0.0.1 64\n"
			    "1.042666667 10.0.0.1 64\n"
			    "100 10.0.0.1 3001\n"
			    "100 10.0.0.1 3000\n";
	char *out, *err;

	if (!have_bin())
		return;
	ASSERT_EQ(simulate("--rate 12kbit --burst 3000", trace, &out, &err), 0, "exit");
	ASSERT_STREQ(out,
		     "0 10.0.0.1 allow\n0 10.0.0.1 allow\n0 10.0.0.1 drop\n"
		     "0.999999999 10.0.0.1 drop\n1 10.0.0.1 allow\n1 10.0.0.1 drop\n"
		     "1.042666666 10.0.0.1 drop\n1.042666667 10.0.0.1 allow\n"
		     "100 10.0.0.1 drop\n100 10.0.0.1 allow\n",
		     "12kbit burst 3000");
	ASSERT_STREQ(err, "", "stderr");
	free(out);
	free(err);
	/* Without LENGTH a packet is 64 bytes: 25 of them fill a burst of 1600. */
	{
		char t[1024] = "";

		for (int i = 0; i < 26; i++)
			strcat(t, "0 10.0.0.1\n");
		strcat(t, "0.999999999 10.0.0.1\n1 10.0.0.1\n");
		ASSERT_EQ(simulate("--rate 64byte --burst 1600 --summary --quiet", t, &out, NULL),
			  0, "exit");
		ASSERT_CONTAINS(
			out, "10.0.0.1                                           26            2",
			"default length 64: 25 + 1 pass, 2 drop");
		free(out);
	}
	/* A packet rate ignores LENGTH: every packet costs 1. */
	ASSERT_EQ(simulate("--rate 1 --burst 2", "0 10.0.0.1 65535\n0 10.0.0.1 1\n0 10.0.0.1 1\n",
			   &out, NULL),
		  0, "exit");
	ASSERT_STREQ(out, "0 10.0.0.1 allow\n0 10.0.0.1 allow\n0 10.0.0.1 drop\n", "pps");
	free(out);
	/* Windows count bytes: L = 2000 per second. */
	ASSERT_EQ(simulate("--algo fixed-window --rate 16kbit",
			   "0 10.0.0.1 1000\n0.5 10.0.0.1 1000\n0.9 10.0.0.1 1\n1 10.0.0.1 1499\n",
			   &out, NULL),
		  0, "exit");
	ASSERT_STREQ(out,
		     "0 10.0.0.1 allow\n0.5 10.0.0.1 allow\n0.9 10.0.0.1 drop\n1 10.0.0.1 allow\n",
		     "fixed-window bytes");
	free(out);
}

TEST(sim_ipv6_prefix)
{
	const char *trace = "0 2001:db8::1\n0 2001:db8::2\n0 2001:db8:0:1::1\n0 2001:db8:1::1\n";
	static const struct {
		const char *args, *want;
	} cases[] = {
		{ "--rate 1 --burst 1",
		  "0 2001:db8::/64 allow\n0 2001:db8::/64 drop\n0 2001:db8:0:1::/64 allow\n"
		  "0 2001:db8:1::/64 allow\n" },
		{ "--rate 1 --burst 1 --prefix6 64",
		  "0 2001:db8::/64 allow\n0 2001:db8::/64 drop\n0 2001:db8:0:1::/64 allow\n"
		  "0 2001:db8:1::/64 allow\n" },
		{ "--rate 1 --burst 1 --prefix6 128",
		  "0 2001:db8::1 allow\n0 2001:db8::2 allow\n0 2001:db8:0:1::1 allow\n"
		  "0 2001:db8:1::1 allow\n" },
		{ "--rate 1 --burst 1 --prefix6 48",
		  "0 2001:db8::/48 allow\n0 2001:db8::/48 drop\n0 2001:db8::/48 drop\n"
		  "0 2001:db8:1::/48 allow\n" },
		{ "--rate 1 --burst 1 --prefix6 0",
		  "0 ::/0 allow\n0 ::/0 drop\n0 ::/0 drop\n0 ::/0 drop\n" },
	};
	char *out, *err;

	if (!have_bin())
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_EQ(simulate(cases[i].args, trace, &out, &err), 0, cases[i].args);
		ASSERT_STREQ(out, cases[i].want, cases[i].args);
		ASSERT_STREQ(err, "", cases[i].args);
		free(out);
		free(err);
	}
	/* /0 for IPv4 merges all of IPv4, but keeps IPv6 apart. */
	ASSERT_EQ(simulate("--rate 1 --burst 1 --prefix4 0 --prefix6 0",
			   "0 10.0.0.1\n0 192.0.2.1\n0 2001:db8::1\n0 ::1\n", &out, NULL),
		  0, "exit");
	ASSERT_STREQ(out, "0 0.0.0.0/0 allow\n0 0.0.0.0/0 drop\n0 ::/0 allow\n0 ::/0 drop\n",
		     "prefix 0");
	free(out);
}

/* Timestamps exactly as written, up to the top of the 64-bit ns clock. */
TEST(sim_large_timestamps)
{
	const char *trace = "9223372036.854775807 10.0.0.1\n" /* 2^63 - 1 ns */
			    "9223372036.854775808 10.0.0.1\n" /* 2^63 ns */
			    "9223372037.854775808 10.0.0.1\n"
			    "18446744069.999999999 10.0.0.1\n";
	char *out, *err;

	if (!have_bin())
		return;
	ASSERT_EQ(simulate("--rate 1 --burst 1", trace, &out, &err), 0, "exit");
	ASSERT_STREQ(out,
		     "9223372036.854775807 10.0.0.1 allow\n9223372036.854775808 10.0.0.1 drop\n"
		     "9223372037.854775808 10.0.0.1 allow\n18446744069.999999999 10.0.0.1 allow\n",
		     "around 2^63 ns");
	ASSERT_STREQ(err, "", "stderr");
	free(out);
	free(err);
	/* Past 2^64 - 1 ns: refused, naming the line. */
	ASSERT_EQ(simulate("--rate 1", "1\n18446744073.709551616\n", NULL, &err), 1, "2^64 ns");
	ASSERT_CONTAINS(err, "line 2", "names the line");
	ASSERT_CONTAINS(err, "too large", "says why");
	free(err);
}

/* Every whole ns up to 2^64 - 1 is a valid timestamp (the core's clock is 64-bit). */
TEST(sim_timestamp_range)
{
	char *out, *err;

	if (!have_bin())
		return;
	ASSERT_EQ(simulate("--rate 1 --burst 1",
			   "18446744070 10.0.0.1\n18446744073.709551615 10.0.0.1\n", &out, &err),
		  0, "exit");
	ASSERT_STREQ(out, "18446744070 10.0.0.1 allow\n18446744073.709551615 10.0.0.1 allow\n",
		     "up to 2^64 - 1 ns");
	ASSERT_STREQ(err, "", "stderr");
	free(out);
	free(err);
}

/* ---------------------------------------------------------------------------
 * Errors: a message on stderr naming the problem; exit 1 for a bad trace,
 * 2 for bad options; nothing after the error.
 */
TEST(sim_bad_trace)
{
	static const struct {
		const char *trace;
		const char *why[3];
	} cases[] = {
		{ "1 10.0.0.1\n2 10.0.0.1\nabc 10.0.0.1\n3 10.0.0.1\n", { "line 3", "abc" } },
		{ "1\n\n# c\n2\n1.5\n", { "line 5", "1.5", "earlier" } },
		{ "2 10.0.0.1\n1.999999999 10.0.0.2\n", { "line 2", "earlier" } },
		{ "1 10.0.0.256\n", { "line 1", "10.0.0.256" } },
		{ "1 10.0.0.1\n1 2001:db8::g\n", { "line 2", "2001:db8::g" } },
		{ "1 example.com\n", { "line 1", "example.com" } },
		{ "1 10.0.0.1 0\n", { "line 1", "length", "0" } },
		{ "1 10.0.0.1 70000\n", { "line 1", "length", "70000" } },
		{ "1 10.0.0.1 65536\n", { "line 1", "length", "65536" } },
		{ "1 10.0.0.1 1500bytes\n", { "line 1", "length", "1500bytes" } },
		{ "1 10.0.0.1 -5\n", { "line 1", "length" } },
		{ "1 10.0.0.1 64 extra\n", { "line 1", "protocol 'extra'" } },
		{ "1 10.0.0.1 64 tcp/1 S extra\n", { "line 1", "too many fields" } },
		{ "1 10.0.0.1 64 icmp/5\n", { "line 1", "only tcp and udp have a port" } },
		{ "1 10.0.0.1 64 tcp/65536\n", { "line 1", "port", "65536" } },
		{ "1 10.0.0.1 64 tcp/\n", { "line 1", "port" } },
		{ "1 10.0.0.1 64 udp/53 S\n", { "line 1", "need a tcp packet with a port" } },
		{ "1 10.0.0.1 64 tcp S\n", { "line 1", "need a tcp packet with a port" } },
		{ "1 10.0.0.1 64 tcp/80 SX\n", { "line 1", "'SX'", "letters" } },
		{ "1 10.0.0.1 64 256\n", { "line 1", "protocol '256'" } },
		{ "1.0000000001\n", { "line 1", "1.0000000001", "decimals" } },
		{ "1,5\n", { "line 1", "1,5" } },
		{ "-1\n", { "line 1", "-1" } },
		{ ".\n", { "line 1", "'.'" } },
		{ "1e3\n", { "line 1", "1e3" } },
	};
	char *out, *err;

	if (!have_bin())
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret = simulate("--rate 100 --summary", cases[i].trace, &out, &err);

		ASSERT_EQ(ret, 1, cases[i].trace);
		for (int k = 0; k < 3 && cases[i].why[k]; k++)
			ASSERT_CONTAINS(err, cases[i].why[k], cases[i].trace);
		ASSERT_EQ(count_str(out, "total"), 0, "no summary after an error");
		ASSERT_EQ(count_str(err, "\n"), 1, "one message");
		free(out);
		free(err);
	}
	/* A trace file that is not there. */
	ASSERT_EQ(simulate_how("--rate 1", "", "--trace /nonexistent/rl-trace", NULL, &err), 1,
		  "missing file");
	ASSERT_CONTAINS(err, "/nonexistent/rl-trace", "names the file");
	free(err);
}

TEST(sim_bad_options)
{
	static const struct {
		const char *args;
		const char *why[2];
	} cases[] = {
		{ "--rate 10 --frobnicate", { "--frobnicate", "unknown" } },
		{ "--rate 10 frobnicate", { "frobnicate", NULL } },
		{ "--rate", { "--rate", "needs a value" } },
		{ "--rate 10 --burst", { "--burst", "needs a value" } },
		{ "--rate 10 --trace", { "--trace", NULL } },
		{ "--algo fixed-window --rate 10 --burst 5", { "--burst", "fixed-window" } },
		{ "--algo sliding-window --rate 10 --initial 5", { "--initial", NULL } },
		{ "--rate 10 --window 1s", { "--window", "token-bucket" } },
		{ "--algo fixed-window --rate 10 --window 150ms", { "whole", NULL } },
		{ "--algo fixed-window --rate 10 --window 2d", { "--window", NULL } },
		{ "", { "--rate", "required" } },
		{ "--summary", { "--rate", "required" } },
		{ "--rate 0", { "--rate", "zero" } },
		{ "--rate 10kbps", { "--rate", "unit" } },
		{ "--rate 1.0000000001", { "--rate", "decimals" } },
		{ "--rate 200000000000", { "--rate", "too high" } },
		{ "--rate 10 --burst abc", { "--burst", "abc" } },
		{ "--rate 10 --burst 20 --initial 21", { "--initial", NULL } },
		{ "--rate 10 --prefix4 33", { "--prefix4", "33" } },
		{ "--rate 10 --prefix6 129", { "--prefix6", "129" } },
		{ "--algo leaky --rate 10", { "--algo", "leaky" } },
	};
	char *out, *err;

	if (!have_bin())
		return;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* The trace on stdin, so that the options under test come last. */
		int ret = simulate_how(cases[i].args, "1 10.0.0.1\n", "< %s", &out, &err);

		ASSERT_EQ(ret, 2, cases[i].args);
		for (int k = 0; k < 2 && cases[i].why[k]; k++)
			ASSERT_CONTAINS(err, cases[i].why[k], cases[i].args);
		ASSERT_STREQ(out, "", "nothing on stdout");
		free(out);
		free(err);
	}
}
