// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * apply FILE: the loader's errors (FILE:LINE and the key), the model it
 * builds, --check without privileges, the example file; and on a veth pair,
 * attach, idempotence (no new generation), a live set that keeps the states,
 * --diff, --prune, and a file with one bad interface changing nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "apply.h"
#include "netns.h"
#include "opts.h"
#include "source.h"
#include "log.h"
#include "test.h"
#include "xdp_attach.h"

/* Write @text (printf-style) to a fresh file under /tmp; its path into @path. */
__attribute__((format(printf, 3, 4))) static bool write_file(char *path, size_t len,
							     const char *fmt, ...)
{
	va_list ap;
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/rl-apply-XXXXXX.yaml");
	fd = mkstemps(path, 5);
	if (!ASSERT_TRUE(fd >= 0, "temporary file"))
		return false;
	f = fdopen(fd, "w");
	if (!ASSERT_TRUE(f != NULL, "fdopen")) {
		close(fd);
		unlink(path);
		return false;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	/* --check runs as nobody below. */
	chmod(path, 0644);
	return true;
}

struct bad_file {
	const char *text;
	int line;
	const char *msg; /* after "FILE:LINE: " */
};

static const struct bad_file bad_files[] = {
	{ "interfaces:\n  eth0:\n    rate: 10\n    bogus: 1\n", 4, "eth0: unknown key 'bogus'" },
	{ "interfaces:\n  eth0:\n    rate: ten\n", 3, "eth0: rate: 'ten' is not a rate" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    burst: 0\n", 4, "eth0: burst: " },
	{ "interfaces:\n  eth0:\n    rate: 10\n    mode: hw\n", 4,
	  "eth0: mode: 'hw' is neither native nor skb" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rate: 20\n", 4,
	  "eth0: 'rate' is given twice (first on line 3)" },
	{ "interfaces:\n  eth0:\n    rate: 10\n  eth1:\n    rate: 5\n  eth0:\n    rate: 20\n", 6,
	  "interfaces: 'eth0' is given twice (first on line 2)" },
	{ "interfaces:\n  eth0:\n    burst: 10\n", 2, "eth0: --rate is required" },
	{ "interfaces:\n  eth0:\n    rate:\n", 3, "eth0: rate needs a value" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    src: 198.18.0.1\n", 4,
	  "eth0: unknown key 'src' (a rule's option" },
	{ "interfaces:\n  eth0: [\n", 3,
	  "while parsing a flow node: did not find expected node content" },
	{ "interfaces:\n  this-name-is-far-too-long:\n    rate: 10\n", 2,
	  "'this-name-is-far-too-long' is not an interface name" },
	{ "version: 1\ninterfaces:\n", 1, "unknown key 'version'" },
	/* A typo gets the nearest key valid at its place. */
	{ "interfaces:\n  eth0:\n    rate: 10\n    brust: 5\n", 4,
	  "eth0: unknown key 'brust' (did you mean 'burst'?)" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rule:\n      - name: a\n", 4,
	  "eth0: unknown key 'rule' (did you mean 'rules'?)" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    max-source: 5\n", 4,
	  "eth0: unknown key 'max-source' (did you mean 'max-sources'?)" },
	{ "interface:\n  eth0:\n    rate: 10\n", 1,
	  "unknown key 'interface' (did you mean 'interfaces'?)" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        prot: tcp\n"
	  "        deny: true\n",
	  6, "eth0: rule a: unknown key 'prot' (did you mean 'proto'?)" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: b\n        deyn: true\n",
	  6, "eth0: rule b: unknown key 'deyn' (did you mean 'deny'?)" },

	/* Rules. */
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        proto: tcp\n"
	  "        dport: 99999\n        allow: true\n",
	  7, "eth0: rule a: dport: '99999'" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        dport: 80\n"
	  "        allow: true\n",
	  6, "eth0: rule a: dport needs --proto tcp or --proto udp" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        allow: maybe\n",
	  6, "eth0: rule a: allow: give true or false" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - proto: tcp\n        deny: true\n",
	  5, "eth0: rules: a rule needs a name" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        allow: true\n"
	  "      - name: a\n        deny: true\n",
	  7, "eth0: rule a: a rule of that name comes before" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        allow: true\n"
	  "        before: b\n",
	  7, "eth0: rule a: unknown key 'before' (the order of the list" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        src: 10.0.0.1/8\n"
	  "        deny: true\n",
	  6, "eth0: rule a: src: " },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: a\n        proto: tcp\n",
	  5, "eth0: rule a: no action" },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: default\n        deny: true\n",
	  5, "eth0: rule default: " },
	{ "interfaces:\n  eth0:\n    rate: 10\n    rules: 3\n", 4, "eth0: rules: give a list" },
};

TEST(apply_load_errors)
{
	char path[64], want[512], what[64], err[RL_ERRLEN];
	struct rl_apply_file f;

	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		const struct bad_file *b = &bad_files[i];

		snprintf(what, sizeof(what), "bad file %zu", i);
		if (!write_file(path, sizeof(path), "%s", b->text))
			return;
		err[0] = '\0';
		ASSERT_EQ(rl_apply_load(&f, path, err, sizeof(err)), -EINVAL, what);
		snprintf(want, sizeof(want), "%s:%d: %s", path, b->line, b->msg);
		if (!ASSERT_TRUE(!strncmp(err, want, strlen(want)), what))
			printf("    got:  %s\n    want: %s...\n", err, want);
		unlink(path);
	}
	ASSERT_EQ(rl_apply_load(&f, "/nonexistent/rl.yaml", err, sizeof(err)), -ENOENT,
		  "a missing file");
	ASSERT_CONTAINS(err, "/nonexistent/rl.yaml", "the error names it");
}

TEST(apply_load_model)
{
	char path[64], err[RL_ERRLEN] = "";
	struct rl_apply_file f;
	const struct rl_apply_iface *a, *b;

	if (!write_file(path, sizeof(path),
			"# a comment\n"
			"interfaces:\n"
			"  eth0:\n"
			"    mode: skb\n"
			"    max-sources: 4096\n"
			"    rate: 30/m\n"
			"    burst: 7\n"
			"    action: dry-run\n"
			"  eth1:\n"
			"    rate: 100mbit\n"
			"    max-sources6: 100\n"
			"    rules:\n"
			"      - name: office\n"
			"        src: [198.18.0.0/24, '2001:db8::/48']\n"
			"        allow: true\n"
			"      - name: syn\n"
			"        proto: tcp\n"
			"        tcp-flags: syn\n"
			"        rate: 20\n"
			"        block: 1m\n"
			"        deny: false\n"))
		return;
	if (!ASSERT_OK(rl_apply_load(&f, path, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_EQ(f.n, 2, "two interfaces"))
		goto free;
	a = &f.ifs[0];
	b = &f.ifs[1];
	ASSERT_STREQ(a->name, "eth0", "first interface");
	ASSERT_EQ(a->line, 3, "its line");
	ASSERT_EQ(a->mode, RL_MODE_SKB, "mode");
	ASSERT_EQ(a->max_sources, 4096, "max-sources");
	ASSERT_EQ(a->max_sources6, 256, "max-sources6 defaults to a sixteenth");
	ASSERT_EQ(a->pol.rate_num * 60, a->pol.rate_den * 30, "rate 30/m");
	ASSERT_EQ(a->cfg.burst, 7, "burst");
	ASSERT_EQ(a->o.action, RL_ACTION_DRY_RUN, "action");
	ASSERT_EQ(a->nrules, 0, "no rules");
	ASSERT_EQ(b->mode, RL_MODE_NATIVE, "default mode");
	ASSERT_EQ(b->max_sources6, 100, "max-sources6 given");
	ASSERT_TRUE(b->pol.bytes, "a byte rate");
	if (ASSERT_EQ(b->nrules, 2, "two rules") && ASSERT_EQ(b->rules.n, 3, "and default")) {
		const struct rl_rule *r0 = &b->rules.rules[0], *r1 = &b->rules.rules[1];

		ASSERT_STREQ(r0->name, "office", "rule order");
		ASSERT_EQ(r0->action, RL_RULE_ALLOW, "allow: true");
		ASSERT_EQ(r0->n4 + r0->n6, 2, "src as a list: both prefixes");
		ASSERT_STREQ(r1->name, "syn", "second rule");
		ASSERT_EQ(r1->action, RL_RULE_LIMIT, "deny: false is no deny");
		ASSERT_EQ(r1->block_ns, 60000000000ULL, "block: 1m");
		ASSERT_EQ(r1->pol.rate_num, 20, "the rule's own rate");
		ASSERT_STREQ(b->rules.rules[2].name, "default", "default last");
	}
free:
	rl_apply_free(&f);
out:
	unlink(path);
}

/* The rule changes between two files' rule sets: by name, in printed form, and the order. */
/*
 * An empty source list in the file (src: [], src: '', a src-file: that lists
 * nothing) is a rule that matches no source, never one that matches all; a
 * rule without src: matches any source.
 */
TEST(apply_load_empty_src)
{
	char path[64], empty[64], text[512], err[RL_ERRLEN] = "";
	struct rl_pkt_info p = { .proto = 17, .info = RL_PKT_PROTO };
	struct rl_apply_file f;

	/* The warnings these rules provoke are the point, not news (the runner resets it). */
	rl_verbose = -1;
	if (!write_file(empty, sizeof(empty), "# nothing\n"))
		return;
	snprintf(text, sizeof(text),
		 "interfaces:\n"
		 "  eth0:\n"
		 "    rate: 10\n"
		 "    rules:\n"
		 "      - {name: a, src: [], allow: true}\n"
		 "      - {name: b, src: '', deny: true}\n"
		 "      - {name: c, src-file: %s, rate: 1}\n"
		 "      - {name: d, proto: udp, deny: true}\n",
		 empty);
	if (!write_file(path, sizeof(path), text))
		goto out_empty;
	if (!ASSERT_OK(rl_apply_load(&f, path, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_EQ(f.n, 1, "one interface") || !ASSERT_EQ(f.ifs[0].nrules, 4, "four rules"))
		goto free;
	ASSERT_OK(rl_key_parse("198.18.0.1", &p.src), "source");
	for (int i = 0; i < 3; i++) {
		const struct rl_rule *r = &f.ifs[0].rules.rules[i];

		ASSERT_TRUE(rl_rule_src_empty(r), r->name);
		ASSERT_TRUE(!rl_rule_match(r, &p), r->name);
	}
	ASSERT_TRUE(rl_rule_match(&f.ifs[0].rules.rules[3], &p), "no src: any source");
free:
	rl_apply_free(&f);
out:
	unlink(path);
out_empty:
	unlink(empty);
}

TEST(apply_rules_diff)
{
	static const char *const head = "interfaces:\n  eth0:\n    rate: 10\n    rules:\n";
	char p1[64] = "", p2[64] = "", err[RL_ERRLEN] = "";
	struct rl_apply_file a = {}, b = {};
	struct rl_apply_rule_change *c = NULL;
	size_t n = 0;

	if (!write_file(
		    p1, sizeof(p1),
		    "%s      - name: x\n        deny: true\n      - name: y\n        allow: true\n"
		    "      - name: z\n        proto: udp\n        rate: 5\n",
		    head) ||
	    !write_file(
		    p2, sizeof(p2),
		    "%s      - name: y\n        allow: true\n      - name: x\n        deny: true\n"
		    "      - name: w\n        proto: tcp\n        deny: true\n",
		    head))
		goto out;
	if (!ASSERT_OK(rl_apply_load(&a, p1, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_apply_load(&b, p2, err, sizeof(err)), err))
		goto out;
	if (!ASSERT_OK(rl_apply_rules_diff(&a.ifs[0].rules, &a.ifs[0].rules, &c, &n), "same") ||
	    !ASSERT_EQ(n, 0, "a set against itself: no change"))
		goto out;
	if (!ASSERT_OK(rl_apply_rules_diff(&a.ifs[0].rules, &b.ifs[0].rules, &c, &n), "diff") ||
	    !ASSERT_EQ(n, 3, "an add, a del, an order"))
		goto out;
	ASSERT_EQ(c[0].op, RL_APPLY_RULE_ADD, "w is new");
	ASSERT_STREQ(c[0].new, "w --proto tcp --deny", "as rule add's words");
	ASSERT_TRUE(!c[0].old, "no old");
	ASSERT_EQ(c[1].op, RL_APPLY_RULE_DEL, "z is gone");
	ASSERT_STREQ(c[1].old, "z --proto udp --rate 5/s", "as rule add's words");
	ASSERT_EQ(c[2].op, RL_APPLY_RULE_ORDER, "x and y swapped");
	ASSERT_STREQ(c[2].old, "x y", "the old order");
	ASSERT_STREQ(c[2].new, "y x", "the new order");
	rl_apply_rule_changes_free(c, n);
	c = NULL;
	/* From nothing (an attach): every rule an add. */
	if (ASSERT_OK(rl_apply_rules_diff(NULL, &b.ifs[0].rules, &c, &n), "from nothing"))
		ASSERT_EQ(n, 3, "three adds");
out:
	rl_apply_rule_changes_free(c, n);
	rl_apply_free(&a);
	rl_apply_free(&b);
	if (*p1)
		unlink(p1);
	if (*p2)
		unlink(p2);
}

/*
 * The shipped example loads (--check also plans it against this host's
 * interfaces, which have other names: the loader alone here).
 */
TEST(apply_example_checks)
{
	char err[RL_ERRLEN] = "";
	struct rl_apply_file f;
	size_t rules = 0;

	if (!ASSERT_OK(access("examples/xdp-ratelimit.yaml", R_OK), "run from the source tree") ||
	    !ASSERT_OK(rl_apply_load(&f, "examples/xdp-ratelimit.yaml", err, sizeof(err)), err))
		return;
	for (size_t i = 0; i < f.n; i++)
		rules += f.ifs[i].nrules;
	ASSERT_EQ(f.n, 2, "the example's interfaces");
	ASSERT_EQ(rules, 3, "the example's rules");
	rl_apply_free(&f);
}

/* --check of a bad file: exit 2 and FILE:LINE on stderr, without privileges. */
TEST(apply_check_cli)
{
	char path[64], cmd[512], want[128], *out = NULL, *err = NULL;

	if (!write_file(path, sizeof(path),
			"interfaces:\n  nosuch0:\n    rate: 10\n    burst: x\n"))
		return;
	snprintf(cmd, sizeof(cmd), "%s%s/xdp-ratelimit apply --check %s",
		 geteuid() ? "" : "setpriv --reuid=nobody --regid=nogroup --clear-groups ",
		 rl_build_dir, path);
	ASSERT_EQ(rl_run(cmd, &out, &err), 2, "a bad file");
	snprintf(want, sizeof(want), "%s:4: nosuch0: burst: ", path);
	ASSERT_CONTAINS(err, want, "the error names FILE:LINE and the key");
	free(out);
	free(err);
	out = err = NULL;
	/*
	 * A valid file: the plan against the kernel follows, as apply's, which
	 * needs its privileges; as nobody, --check says so rather than pass.
	 */
	unlink(path);
	if (!write_file(path, sizeof(path), "interfaces:\n  nosuch0:\n    rate: 10\n"))
		return;
	snprintf(cmd, sizeof(cmd), "%s%s/xdp-ratelimit apply --check --json %s",
		 geteuid() ? "" : "setpriv --reuid=nobody --regid=nogroup --clear-groups ",
		 rl_build_dir, path);
	ASSERT_EQ(rl_run(cmd, &out, &err), 1, "--check of a valid file, unprivileged");
	ASSERT_CONTAINS(out, "missing capabilities", "--check --json says what it lacks");
	free(out);
	free(err);
	unlink(path);
}

/* ---- hostile files: each refused with a clear message, in bounded time ---- */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void gen_deep_map(FILE *f)
{
	/* 1M-deep flow map: libyaml's scanner alone was quadratic in the depth. */
	fputs("interfaces: ", f);
	for (int i = 0; i < 1000000; i++)
		fputs("{a: ", f);
	fputc('1', f);
	for (int i = 0; i < 1000000; i++)
		fputc('}', f);
	fputc('\n', f);
}

static void gen_deep_seq(FILE *f)
{
	fputs("interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - src: ", f);
	for (int i = 0; i < 100000; i++)
		fputc('[', f);
	for (int i = 0; i < 100000; i++)
		fputc(']', f);
	fputc('\n', f);
}

static void gen_keys(FILE *f)
{
	fputs("interfaces:\n  eth0:\n", f);
	for (int i = 0; i < 200000; i++)
		fprintf(f, "    k%d: 1\n", i);
}

static void gen_ifaces(FILE *f)
{
	fputs("interfaces:\n", f);
	for (int i = 0; i < 100000; i++)
		fprintf(f, "  e%d:\n    rate: 10\n", i);
}

/* A billion laughs: 10^9 nodes through aliases of aliases, in under 1 KiB. */
static void gen_laughs(FILE *f)
{
	fputs("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n", f);
	for (int i = 1; i < 9; i++)
		fprintf(f,
			"l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
			i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	fputs("interfaces:\n", f);
}

static void gen_large(FILE *f)
{
	static char comment[1024];

	memset(comment, '#', sizeof(comment) - 1);
	comment[sizeof(comment) - 2] = '\n';
	fputs("interfaces:\n", f);
	for (int i = 0; i < 17 * 1024; i++)
		fputs(comment, f);
}

struct hostile {
	const char *what;
	const char *text; /* or */
	void (*gen)(FILE *f);
	int line; /* 0: the message has no line */
	const char *msg;
};

static const struct hostile hostile[] = {
	{ "1M-deep flow map", NULL, gen_deep_map, 1, "nested more than 32 deep" },
	{ "100k-deep flow sequence", NULL, gen_deep_seq, 5, "nested more than 32 deep" },
	{ "200,000 keys", NULL, gen_keys, 4099, "more than 4096 keys in one mapping" },
	{ "100,000 interfaces", NULL, gen_ifaces, 8194,
	  "interfaces: more than 4096 interfaces: a file configures at most 4096" },
	{ "a billion laughs", NULL, gen_laughs, 0, "more than 250000 nodes" },
	{ "17 MiB", NULL, gen_large, 0, "is larger than 16 MiB" },
	{ "two documents", "interfaces:\n  eth0:\n    rate: 10\n---\ninterfaces:\n  eth1:\n", NULL,
	  4, "a second YAML document (---): the file holds one" },
	{ "unterminated quote",
	  "interfaces:\n  eth0:\n    rate: 10\n    action: \"drop\n    a: 1\n    b: 1\n    c: 1\n"
	  "    d: 1\n    e: 1\n    f: 1\n    g: 1\n    h: 1\n    i: 1\n    j: 1\n",
	  NULL, 15,
	  "while scanning a quoted scalar (which began on line 4): found unexpected end" },
	{ "an alias inside what it names", "interfaces: &a {eth0: *a}\n", NULL, 1,
	  "alias '*a' is inside what it names" },
	{ "an alias before its anchor", "interfaces: {eth0: *a}\n", NULL, 1,
	  "alias '*a' names no anchor before it" },
	{ "an anchor twice", "a: &a 1\nb: &a 2\ninterfaces:\n", NULL, 2,
	  "anchor '&a' is defined twice" },
	/* Of several repeated keys, the first repetition in the file's order. */
	{ "keys repeated", "interfaces:\n  b:\n  c:\n  a:\n  c:\n  b:\n  a:\n", NULL, 5,
	  "interfaces: 'c' is given twice (first on line 3)" },
};

TEST(apply_load_hostile)
{
	char path[64], want[600], what[96], err[RL_ERRLEN];
	struct rl_apply_file f;

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *h = &hostile[i];
		double t0, dt;
		FILE *out;
		int ret;

		if (h->text) {
			if (!write_file(path, sizeof(path), "%s", h->text))
				return;
		} else {
			if (!write_file(path, sizeof(path), "%s", ""))
				return;
			out = fopen(path, "w");
			if (!ASSERT_TRUE(out != NULL, h->what)) {
				unlink(path);
				return;
			}
			h->gen(out);
			fclose(out);
		}
		err[0] = '\0';
		t0 = mono_s();
		ret = rl_apply_load(&f, path, err, sizeof(err));
		dt = mono_s() - t0;
		unlink(path);
		ASSERT_TRUE(ret < 0, h->what);
		if (h->line)
			snprintf(want, sizeof(want), "%s:%d: %s", path, h->line, h->msg);
		else
			snprintf(want, sizeof(want), "%s", h->msg);
		snprintf(what, sizeof(what), "%s: the message", h->what);
		ASSERT_CONTAINS(err, want, what);
		printf("    %-32s refused in %6.1f ms\n", h->what, dt * 1000);
		/* A hang check, not a benchmark: these ran for minutes. */
		snprintf(what, sizeof(what), "%s: refused within 2 s", h->what);
		ASSERT_TRUE(dt < 2, what);
	}
}

/* What is not a regular file is refused without waiting, and named for what it is. */
TEST(apply_load_not_regular)
{
	static const struct {
		const char *path, *is;
	} cases[] = {
		{ NULL, "is a FIFO, not a regular file" }, /* one without a writer */
		{ "/dev/zero", "is a character device, not a regular file" },
		{ "/tmp", "is a directory, not a regular file" },
	};
	char fifo[64], err[RL_ERRLEN], cmd[512], *out = NULL, *cerr = NULL;
	struct rl_apply_file f;

	snprintf(fifo, sizeof(fifo), "/tmp/rl-apply-fifo-%d.yaml", getpid());
	if (!ASSERT_OK(mkfifo(fifo, 0644), "mkfifo"))
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].path ?: fifo;

		ASSERT_EQ(rl_apply_load(&f, p, err, sizeof(err)), -EINVAL, p);
		ASSERT_CONTAINS(err, p, "names the file");
		ASSERT_CONTAINS(err, cases[i].is, p);
	}
	/* And through the command: exit 2 at once, not a hang (timeout kills one). */
	snprintf(cmd, sizeof(cmd), "timeout 10 %s/xdp-ratelimit apply --check %s", rl_build_dir,
		 fifo);
	ASSERT_EQ(rl_run(cmd, &out, &cerr), 2, "apply --check FIFO");
	ASSERT_CONTAINS(cerr, "is a FIFO, not a regular file", "on stderr");
	free(out);
	free(cerr);
	unlink(fifo);
}

/* Aliases still work within the limits: one interface's options shared by another. */
TEST(apply_load_aliases)
{
	char path[64], err[RL_ERRLEN] = "";
	struct rl_apply_file f;

	if (!write_file(path, sizeof(path),
			"interfaces:\n  eth0: &o\n    rate: 10\n    burst: 7\n  eth1: *o\n"))
		return;
	if (ASSERT_OK(rl_apply_load(&f, path, err, sizeof(err)), err)) {
		if (ASSERT_EQ(f.n, 2, "two interfaces")) {
			ASSERT_EQ(f.ifs[1].cfg.burst, 7, "eth1 has eth0's burst");
			ASSERT_EQ(f.ifs[1].line, 5, "eth1's line");
		}
		rl_apply_free(&f);
	}
	unlink(path);
}

/* ---- on a veth pair ---- */

/* The live generation and tracked sources of @ifname in the receiving namespace. */
static bool live(struct rl_ns *ns, const char *ifname, unsigned long long *gen,
		 unsigned long long *burst)
{
	char *out = NULL;
	bool ok;

	ok = ASSERT_EQ(rl_ns_cli(ns, &out, NULL, "status %s --json", ifname), 0, "status") &&
	     ASSERT_TRUE(rl_json_u64(out, "generation", gen), "status has the generation") &&
	     (!burst || ASSERT_TRUE(rl_json_u64(out, "burst", burst), "status has the burst"));
	free(out);
	return ok;
}

static bool sources(struct rl_ns *ns, unsigned long long *n)
{
	char *out = NULL;
	bool ok;

	ok = ASSERT_EQ(rl_ns_cli(ns, &out, NULL, "stats %s --json", ns->rx_if), 0, "stats") &&
	     ASSERT_TRUE(rl_json_u64(out, "sources", n), "stats has sources");
	free(out);
	return ok;
}

/* The second interface of the test: a veth pair of its own inside the receiving namespace. */
static bool second_iface(struct rl_ns *ns, char *a, size_t len)
{
	snprintf(a, len, "rl%dap", (int)getpid() % 100000);
	return ASSERT_OK(rl_ns_rx_sh(ns, NULL,
				     "ip link add %s type veth peer name %.8sq && ip link set %s up"
				     " && ip link set %.8sq up",
				     a, a, a, a),
			 "a second veth pair in the namespace");
}

static void second_iface_remove(struct rl_ns *ns, const char *a)
{
	char dir[512];

	if (!*a)
		return;
	rl_ns_cli(ns, NULL, NULL, "detach %s", a);
	if (!rl_ns_pin_dir(ns->rx, a, dir, sizeof(dir)) && !access(dir, F_OK))
		rl_sh(NULL, "rm -rf '%s'", dir);
}

TEST_FLAGS(apply_attach_idempotent_set, RL_TEST_ROOT)
{
	struct rl_flow f = { .src = "198.18.0.100", .rand_bytes = 1, .seq = true, .count = 64 };
	char path[64] = "", *out = NULL, *err = NULL;
	unsigned long long gen = 0, burst = 0, n0 = 0, n1 = 0;
	unsigned int id = 0, id2 = 0;
	struct rl_ns ns = {};

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	if (!write_file(path, sizeof(path),
			"interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n    burst: 100\n",
			ns.rx_if))
		goto out;
	/* --diff before anything: an attach, and nothing done. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --diff %s", path), 1, "apply --diff: drift");
	ASSERT_CONTAINS(out, ": attach (mode skb, max-sources 1048576", "--diff says attach");
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_EQ(id, 0, "--diff attached nothing");
	free(out);
	free(err);
	out = err = NULL;

	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply attaches") ||
	    !live(&ns, ns.rx_if, &gen, &burst))
		goto out;
	ASSERT_CONTAINS(out, ": attach", "apply says it attached");
	ASSERT_EQ(gen, 1, "a first generation");
	ASSERT_EQ(burst, 100, "the file's burst");
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_TRUE(id != 0, "attached");
	free(out);
	free(err);
	out = err = NULL;

	/* Sources to keep across the set. */
	if (!ASSERT_OK(rl_flow_start(&ns, &f), "send from 64 sources") ||
	    !ASSERT_OK(rl_flow_wait(&f), "trafgen") || !sources(&ns, &n0))
		goto out;
	ASSERT_EQ(n0, 64, "64 sources tracked");

	/* The same file again: nothing, not even a new generation. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply again");
	ASSERT_CONTAINS(out, ": unchanged", "apply says unchanged");
	ASSERT_STREQ(err, "", "no message");
	if (!live(&ns, ns.rx_if, &gen, NULL))
		goto out;
	ASSERT_EQ(gen, 1, "the same file twice: no new generation");
	free(out);
	out = NULL;
	/* No drift: --diff exits 0, and says so, with --json too. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff %s", path), 0, "--diff: no drift");
	ASSERT_CONTAINS(out, ": unchanged\n", "--diff says unchanged");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff --json %s", path), 0,
		  "--diff --json: no drift");
	ASSERT_CONTAINS(out, "\"action\":\"unchanged\"", "--diff --json says unchanged");
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id2), "read the XDP program");
	ASSERT_EQ(id2, id, "the same program");
	free(out);
	free(err);
	out = err = NULL;

	/* A changed rate: --diff names it, apply sets it live. */
	unlink(path);
	if (!write_file(path, sizeof(path),
			"interfaces:\n  %s:\n    mode: skb\n    rate: 2000\n    burst: 100\n",
			ns.rx_if))
		goto out;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff %s", path), 1, "apply --diff: drift");
	ASSERT_CONTAINS(out, ": set: rate 1000/s -> 2000/s\n", "--diff: the one change");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff --json %s", path), 1, "--diff --json");
	ASSERT_CONTAINS(out,
			"\"action\":\"set\",\"changes\":[{\"key\":\"rate\",\"old\":\"1000/s\","
			"\"new\":\"2000/s\"}]",
			"--diff --json");
	free(out);
	out = NULL;
	if (!live(&ns, ns.rx_if, &gen, NULL))
		goto out;
	ASSERT_EQ(gen, 1, "--diff changed nothing");
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply the new rate");
	ASSERT_CONTAINS(out, ": set: rate 1000/s -> 2000/s", "apply says set");
	if (!live(&ns, ns.rx_if, &gen, NULL) || !sources(&ns, &n1))
		goto out;
	ASSERT_EQ(gen, 2, "a set: the next generation");
	ASSERT_EQ(n1, n0, "every source's state carried over");
out:
	free(out);
	free(err);
	rl_flow_stop(&f);
	rl_ns_destroy(&ns);
	if (*path)
		unlink(path);
}

/*
 * Files that must change nothing, after a good interface: YAML with %s for
 * the second interface; the message in stderr with %1$s the file and %2$s
 * the second interface (NULL: the exit status only).
 */
struct refused_file {
	const char *what;
	const char *second;
	int rc;
	const char *msg;
};

static const struct refused_file refused[] = {
	{ "a missing interface", "  rlnosuch0:\n    rate: 10\n", 1, "%1$s:5: rlnosuch0: " },
	{ "a live mode change", "  %s:\n    mode: native\n    rate: 500\n", 1,
	  "%1$s:5: %2$s: mode: the limiter runs in skb mode" },
	{ "a live table size change", "  %s:\n    mode: skb\n    rate: 500\n    max-sources6: 77\n",
	  1, "%1$s:5: %2$s: max-sources6: the live table holds 65536" },
	{ "a bad value", "  %s:\n    mode: skb\n    rate: fast\n", 2, NULL },
	/* Rules for the first interface: none goes live either. */
	{ "a bad rule on the second",
	  "    rules:\n      - name: r\n        proto: udp\n        deny: true\n"
	  "  %s:\n    mode: skb\n    rate: 500\n    rules:\n      - name: bad\n"
	  "        dport: 80\n        deny: true\n",
	  2, "%1$s:14: %2$s: rule bad: dport needs --proto tcp or --proto udp" },
	{ "rules, then a missing interface",
	  "    rules:\n      - name: r\n        proto: udp\n        deny: true\n"
	  "  rlnosuch0:\n    rate: 10\n",
	  1, "%1$s:9: rlnosuch0: " },
};

TEST_FLAGS(apply_prune_and_all_or_nothing, RL_TEST_ROOT)
{
	char path[64] = "", a[IF_NAMESIZE] = "", *out = NULL, *err = NULL, want[128];
	unsigned long long gen = 0, gen_a = 0, burst = 0;
	struct rl_ns ns = {};
	unsigned int id = 1;

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	if (!second_iface(&ns, a, sizeof(a)))
		goto out;
	/* A bad second interface: the first, not attached, is not attached either. */
	if (!write_file(path, sizeof(path),
			"interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n"
			"  rlnosuch0:\n    rate: 10\n",
			ns.rx_if))
		goto out;
	ASSERT_EQ(rl_ns_cli(&ns, NULL, &err, "apply %s", path), 1, "a missing interface");
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_EQ(id, 0, "nothing attached to the good interface");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "status %s", ns.rx_if), 1, "no pins either");
	free(err);
	err = NULL;
	unlink(path);
	if (!write_file(path, sizeof(path),
			"interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n"
			"  %s:\n    mode: skb\n    rate: 500\n",
			ns.rx_if, a))
		goto out;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply two interfaces") ||
	    !live(&ns, ns.rx_if, &gen, NULL) || !live(&ns, a, &gen_a, NULL))
		goto out;
	free(out);
	free(err);
	out = err = NULL;

	/* One bad interface, or a file apply refuses: nothing changes on the good one. */
	for (size_t c = 0; c < sizeof(refused) / sizeof(refused[0]); c++) {
		const struct refused_file *r = &refused[c];
		char second[256];

		snprintf(second, sizeof(second), r->second, a);
		unlink(path);
		if (!write_file(path, sizeof(path),
				"interfaces:\n  %s:\n    mode: skb\n    rate: 3000\n%s", ns.rx_if,
				second))
			goto out;
		ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), r->rc, r->what);
		if (r->msg) {
			snprintf(want, sizeof(want), r->msg, path, a);
			ASSERT_CONTAINS(err, want, r->what);
		}
		free(out);
		free(err);
		out = err = NULL;
		/* --diff: an error is 2, never 1 (drift) nor 0. */
		ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --diff %s", path), 2, r->what);
		if (r->msg)
			ASSERT_CONTAINS(err, want, r->what);
		if (!live(&ns, ns.rx_if, &gen, NULL))
			goto out;
		ASSERT_EQ(gen, 1, r->what);
		free(out);
		out = NULL;
		ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "rule list %s --json", ns.rx_if), 0,
			  "rule list");
		ASSERT_TRUE(out && !strstr(out, "\"name\":\"r\""), r->what);
		free(out);
		free(err);
		out = err = NULL;
	}

	/* The second interface left out: left alone, unless --prune. */
	unlink(path);
	if (!write_file(path, sizeof(path),
			"interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n    burst: 50\n",
			ns.rx_if))
		goto out;
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply without it");
	ASSERT_TRUE(out && !strstr(out, a), "nothing said about the interface left out");
	if (!live(&ns, ns.rx_if, &gen, &burst) || !live(&ns, a, &gen_a, NULL))
		goto out;
	ASSERT_EQ(gen, 2, "the named one set");
	ASSERT_EQ(burst, 50, "to the file's burst");
	free(out);
	free(err);
	out = err = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff --prune %s", path), 1, "--diff --prune");
	snprintf(want, sizeof(want), "%s: detach\n", a);
	ASSERT_CONTAINS(out, want, "--diff --prune: a detach");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --prune %s", path), 0, "apply --prune");
	ASSERT_CONTAINS(out, want, "apply --prune detached it");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "status %s", a), 1, "no limiter on it any more");
	if (!live(&ns, ns.rx_if, &gen, NULL))
		goto out;
	ASSERT_EQ(gen, 2, "the named one untouched by --prune");
	free(out);
	free(err);
	out = err = NULL;

	/* --detach (the unit's stop): every interface of the file. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --detach %s", path), 0, "apply --detach");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "status %s", ns.rx_if), 1, "detached");
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "apply --detach %s", path), 0, "again: nothing to do");
out:
	free(out);
	free(err);
	second_iface_remove(&ns, a);
	rl_ns_destroy(&ns);
	if (*path)
		unlink(path);
}

/* A counter of rule @rule in the JSON of stats (0 and false if it is not there). */
static bool rule_u64(const char *json, const char *rule, const char *key, unsigned long long *v)
{
	char name[64];
	const char *at;

	*v = 0;
	snprintf(name, sizeof(name), "\"name\":\"%s\"", rule);
	at = json ? strstr(json, name) : NULL;
	return at && rl_json_u64(at, key, v);
}

/* The counters and sources of two rules, the generation and the program: what must not move. */
struct rules_seen {
	unsigned long long gen, lim_passed, lim_sources, deny_denied;
	unsigned int prog;
};

static bool rules_seen(struct rl_ns *ns, struct rules_seen *s)
{
	char *out = NULL;
	bool ok;

	ok = live(ns, ns->rx_if, &s->gen, NULL) &&
	     ASSERT_OK(rl_ns_xdp_prog_id(ns, &s->prog), "read the XDP program") &&
	     ASSERT_EQ(rl_ns_cli(ns, &out, NULL, "stats %s --json", ns->rx_if), 0, "stats") &&
	     ASSERT_TRUE(rule_u64(out, "lim", "passed", &s->lim_passed), "stats: lim") &&
	     ASSERT_TRUE(rule_u64(out, "lim", "sources", &s->lim_sources), "stats: lim") &&
	     ASSERT_TRUE(rule_u64(out, "deny-other", "denied", &s->deny_denied),
			 "stats: deny-other");
	free(out);
	return ok;
}

#define RULES_FILE                                                                        \
	"interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n    burst: 100\n    rules:\n" \
	"      - name: deny-other\n        src: %s\n        deny: true\n"                 \
	"      - name: lim\n        src: 198.18.0.0/24\n        proto: udp\n"             \
	"        rate: %s\n        burst: 1000\n        on-insert-fail: drop\n"

/*
 * Rules from the file: made live with the attach, found by rule list and by
 * the traffic they count; the same file again changes nothing (program,
 * generation, rule counters, rule states); a changed rule changes alone.
 */
TEST_FLAGS(apply_rules, RL_TEST_ROOT)
{
	struct rl_flow f = { .src = "198.18.0.100", .rand_bytes = 1, .seq = true, .count = 64 };
	char path[64] = "", want[256], *out = NULL, *err = NULL;
	struct rules_seen a = {}, b = {};
	struct rl_ns ns = {};

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	if (!write_file(path, sizeof(path), RULES_FILE, ns.rx_if, "198.18.1.0/24", "5000"))
		goto out;
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --diff %s", path), 1, "apply --diff");
	ASSERT_CONTAINS(out, "  add deny-other --src 198.18.1.0/24 --deny\n", "--diff: a rule");
	ASSERT_CONTAINS(out,
			"  add lim --src 198.18.0.0/24 --proto udp --rate 5000/s --burst 1000 "
			"--on-insert-fail drop\n",
			"--diff: the other");
	free(out);
	free(err);
	out = err = NULL;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply attaches"))
		goto out;
	ASSERT_CONTAINS(out, ": attach", "apply says it attached");
	ASSERT_CONTAINS(out, "  add lim ", "and added the rules");
	free(out);
	free(err);
	out = err = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "rule list %s", ns.rx_if), 0, "rule list");
	ASSERT_STREQ(out,
		     "deny-other --src 198.18.1.0/24 --deny\n"
		     "lim --src 198.18.0.0/24 --proto udp --rate 5000/s --burst 1000 "
		     "--on-insert-fail drop\n"
		     "default --rate 1000/s --burst 100\n",
		     "the kernel has the file's rules, in order");
	free(out);
	out = NULL;

	/* Traffic from 64 sources under lim: its counters and its states. */
	if (!ASSERT_OK(rl_flow_start(&ns, &f), "send from 64 sources") ||
	    !ASSERT_OK(rl_flow_wait(&f), "trafgen") || !rules_seen(&ns, &a))
		goto out;
	ASSERT_EQ(a.lim_passed, 64, "lim passed every packet");
	ASSERT_EQ(a.lim_sources, 64, "lim tracks 64 sources");
	ASSERT_EQ(a.deny_denied, 0, "deny-other saw none");

	/* The same file again: nothing moves. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply again");
	ASSERT_CONTAINS(out, ": unchanged\n", "apply says unchanged");
	ASSERT_TRUE(out && !strstr(out, "  "), "no rule line");
	ASSERT_STREQ(err, "", "no message");
	free(out);
	free(err);
	out = err = NULL;
	if (!rules_seen(&ns, &b))
		goto out;
	ASSERT_EQ(b.prog, a.prog, "the same program");
	ASSERT_EQ(b.gen, a.gen, "the same generation");
	ASSERT_EQ(b.lim_passed, a.lim_passed, "lim's counters");
	ASSERT_EQ(b.lim_sources, a.lim_sources, "lim's states");

	/* One rule changes its match: only it changes; lim keeps its states and counters. */
	unlink(path);
	if (!write_file(path, sizeof(path), RULES_FILE, ns.rx_if, "198.18.2.0/24", "5000"))
		goto out;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff %s", path), 1, "--diff");
	snprintf(want, sizeof(want),
		 "%s: rules\n  change deny-other --src 198.18.1.0/24 --deny -> deny-other --src "
		 "198.18.2.0/24 --deny\n",
		 ns.rx_if);
	ASSERT_STREQ(out, want, "--diff: the one rule that changes");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "apply --diff --json %s", path), 1, "--diff --json");
	ASSERT_CONTAINS(
		out,
		"\"rule_changes\":[{\"op\":\"change\",\"old\":\"deny-other --src "
		"198.18.1.0/24 --deny\",\"new\":\"deny-other --src 198.18.2.0/24 --deny\"}]",
		"--diff --json: the change");
	free(out);
	out = NULL;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply the change") ||
	    !rules_seen(&ns, &b))
		goto out;
	ASSERT_CONTAINS(out, ": rules\n  change deny-other ", "apply says so");
	ASSERT_TRUE(b.prog != a.prog, "rules are compiled in: a new program");
	ASSERT_EQ(b.gen, a.gen, "the policy's generation stays");
	ASSERT_EQ(b.lim_passed, a.lim_passed, "lim's counters stay");
	ASSERT_EQ(b.lim_sources, a.lim_sources, "lim's states stay");
	free(out);
	free(err);
	out = err = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "rule list %s", ns.rx_if), 0, "rule list");
	ASSERT_CONTAINS(out, "deny-other --src 198.18.2.0/24 --deny\n", "the new match is live");
	free(out);
	out = NULL;

	/* lim's rate changes: its counters stay, its sources start afresh (new states). */
	unlink(path);
	if (!write_file(path, sizeof(path), RULES_FILE, ns.rx_if, "198.18.2.0/24", "4000"))
		goto out;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply a new rate") ||
	    !rules_seen(&ns, &b))
		goto out;
	ASSERT_CONTAINS(out, "  change lim ", "apply says so");
	ASSERT_EQ(b.gen, a.gen, "the policy's generation stays");
	ASSERT_EQ(b.lim_passed, a.lim_passed, "lim's counters stay");
	ASSERT_EQ(b.lim_sources, 0, "lim's sources start afresh");
	free(out);
	free(err);
	out = err = NULL;

	/* No rules in the file and another burst: a set, then the rules go. */
	unlink(path);
	if (!write_file(path, sizeof(path),
			"interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n    burst: 50\n",
			ns.rx_if))
		goto out;
	if (!ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply %s", path), 0, "apply without rules"))
		goto out;
	snprintf(want, sizeof(want), "%s: set: burst 100 -> 50\n  del deny-other ", ns.rx_if);
	ASSERT_CONTAINS(out, want, "a set, then a del");
	ASSERT_CONTAINS(out, "  del lim ", "and the other");
	free(out);
	out = NULL;
	ASSERT_EQ(rl_ns_cli(&ns, &out, NULL, "rule list %s", ns.rx_if), 0, "rule list");
	ASSERT_STREQ(out, "default --rate 1000/s --burst 50\n", "only default, the new burst");
	if (live(&ns, ns.rx_if, &b.gen, NULL))
		ASSERT_EQ(b.gen, a.gen + 1, "the set's generation");
out:
	free(out);
	free(err);
	rl_flow_stop(&f);
	rl_ns_destroy(&ns);
	if (*path)
		unlink(path);
}

/* ---- --check predicts apply; a killed apply leaves the old state or the new ---- */

/* Files apply refuses on a running limiter (skb, rate 1000): %1$s the interface. */
static const struct refused_file check_refused[] = {
	{ "a missing interface", "interfaces:\n  rlnosuch0:\n    rate: 10\n", 1,
	  "%2$s:2: rlnosuch0: " },
	{ "a live mode change", "interfaces:\n  %1$s:\n    mode: native\n    rate: 500\n", 1,
	  "%2$s:2: %1$s: mode: the limiter runs in skb mode, the file says native" },
	{ "a live max-sources change",
	  "interfaces:\n  %1$s:\n    mode: skb\n    rate: 500\n    max-sources: 4096\n", 1,
	  "%2$s:2: %1$s: max-sources: the live table holds 1048576, the file says 4096" },
};

/*
 * --check refuses what apply refuses, with apply's message, and changes
 * nothing; a file apply takes passes it, also before any attach.
 */
TEST_FLAGS(apply_check_predicts, RL_TEST_ROOT)
{
	char path[64] = "", want[256], text[256], *out = NULL, *err = NULL, *err2 = NULL;
	unsigned long long gen = 0;
	struct rl_ns ns = {};
	unsigned int id = 1;

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	if (!write_file(path, sizeof(path), "interfaces:\n  %s:\n    mode: skb\n    rate: 1000\n",
			ns.rx_if))
		goto out;
	/* Nothing attached: a plan of attaches, which passes. */
	ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --check %s", path), 0, "--check, not attached");
	ASSERT_CONTAINS(out, "valid: 1 interface, 0 rules", "--check says valid");
	ASSERT_OK(rl_ns_xdp_prog_id(&ns, &id), "read the XDP program");
	ASSERT_EQ(id, 0, "--check attached nothing");
	free(out);
	free(err);
	out = err = NULL;
	if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "apply %s", path), 0, "apply attaches"))
		goto out;
	for (size_t c = 0; c < sizeof(check_refused) / sizeof(check_refused[0]); c++) {
		const struct refused_file *r = &check_refused[c];

		unlink(path);
		snprintf(text, sizeof(text), r->second, ns.rx_if);
		if (!write_file(path, sizeof(path), "%s", text))
			goto out;
		snprintf(want, sizeof(want), r->msg, ns.rx_if, path);
		ASSERT_EQ(rl_ns_cli(&ns, &out, &err, "apply --check %s", path), r->rc, r->what);
		ASSERT_CONTAINS(err, want, r->what);
		ASSERT_TRUE(out && !strstr(out, "valid"), "--check does not say valid");
		ASSERT_EQ(rl_ns_cli(&ns, NULL, &err2, "apply %s", path), r->rc, r->what);
		ASSERT_STREQ(err, err2, "--check's message is apply's");
		if (live(&ns, ns.rx_if, &gen, NULL))
			ASSERT_EQ(gen, 1, "nothing changed");
		free(out);
		free(err);
		free(err2);
		out = err = err2 = NULL;
	}
out:
	free(out);
	free(err);
	free(err2);
	rl_ns_destroy(&ns);
	if (*path)
		unlink(path);
}

/* State A and B of the kill loop: a policy and rules each, told apart by burst and names. */
#define KILL_FILE                                                                      \
	"interfaces:\n  %s:\n    mode: skb\n    rate: %d\n    burst: %d\n    rules:\n" \
	"      - name: %s\n        src: 198.18.%d.0/24\n        deny: true\n"          \
	"      - name: lim-%s\n        src: 198.18.0.0/24\n        proto: udp\n"       \
	"        rate: 5000\n        burst: 1000\n"

#define KILL_TRIES   50
#define KILL_MAX_S   45
#define KILL_SPAN_US 200000

/* 0: state A, 1: state B, 2: a mix (or unreadable), as status and rule list say. */
static int kill_state(struct rl_ns *ns, char *what, size_t len)
{
	char *st = NULL, *rl = NULL;
	unsigned long long burst = 0;
	bool a, b;
	int ret = 2;

	if (rl_ns_cli(ns, &st, NULL, "status %s --json", ns->rx_if) ||
	    rl_ns_cli(ns, &rl, NULL, "rule list %s --json", ns->rx_if) ||
	    !rl_json_u64(st, "burst", &burst)) {
		snprintf(what, len, "unreadable: status %s, rule list %s", st ? st : "-",
			 rl ? rl : "-");
		goto out;
	}
	a = strstr(rl, "\"one\"") && strstr(rl, "\"lim-one\"") && !strstr(rl, "-two\"");
	b = strstr(rl, "\"two\"") && strstr(rl, "\"lim-two\"") && !strstr(rl, "-one\"");
	if (burst == 100 && a)
		ret = 0;
	else if (burst == 200 && b)
		ret = 1;
	snprintf(what, len, "burst %llu, rules %s", burst, rl);
out:
	free(st);
	free(rl);
	return ret;
}

/* Start "xdp-ratelimit apply @path" in the receiving namespace; its pid, or -1. */
static pid_t apply_start(struct rl_ns *ns, const char *path)
{
	char bin[512], nspath[128];
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/xdp-ratelimit", rl_build_dir);
	snprintf(nspath, sizeof(nspath), "/run/netns/%s", ns->rx);
	pid = fork();
	if (pid == 0) {
		int fd = open(nspath, O_RDONLY | O_CLOEXEC), null = open("/dev/null", O_WRONLY);

		if (fd < 0 || null < 0 || setns(fd, CLONE_NEWNET))
			_exit(127);
		dup2(null, 1);
		dup2(null, 2);
		execl(bin, bin, "apply", path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * SIGKILL apply at random moments while it changes both the policy and the
 * rules (A -> B, then back): each time the limiter must be left in the old
 * state or the new one, never the new policy with the old rules; the lock a
 * killed apply held does not block the next; an apply run to the end then
 * reaches the file's state.
 */
TEST_FLAGS(apply_kill_atomic, RL_TEST_ROOT)
{
	char pa[64] = "", pb[64] = "", what[2048];
	unsigned long long seed = rl_test_seed() ^ 0x61707079;
	int cur, old = 0, new = 0, mix = 0, tries = 0, status;
	double t0 = rl_now(), t_apply;
	__u64 span;
	struct rl_ns ns = {};

	if (!ASSERT_OK(rl_ns_create(&ns), "make the namespace pair"))
		return;
	if (!write_file(pa, sizeof(pa), KILL_FILE, ns.rx_if, 1000, 100, "one", 1, "one") ||
	    !write_file(pb, sizeof(pb), KILL_FILE, ns.rx_if, 2000, 200, "two", 2, "two"))
		goto out;
	t_apply = rl_now();
	if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "apply %s", pa), 0, "apply state A") ||
	    !ASSERT_EQ(kill_state(&ns, what, sizeof(what)), 0, what))
		goto out;
	/*
	 * Kills spread over as long as the first apply took on this host now
	 * (an attach too, so longer than a change; a loaded CI host takes more
	 * than KILL_SPAN_US): some land before the swap, some after.
	 */
	span = (__u64)((rl_now() - t_apply) * 1e6);
	if (span < KILL_SPAN_US)
		span = KILL_SPAN_US;
	cur = 0;
	for (; tries < KILL_TRIES && rl_now() - t0 < KILL_MAX_S; tries++) {
		useconds_t delay = (useconds_t)rl_rand_below(&seed, span);
		pid_t pid = apply_start(&ns, cur ? pa : pb);
		int st;

		if (!ASSERT_TRUE(pid > 0, "fork"))
			break;
		usleep(delay);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		st = kill_state(&ns, what, sizeof(what));
		if (st == cur) {
			old++;
		} else if (st == !cur) {
			new ++;
			cur = st;
		} else {
			mix++;
			printf("    try %d, killed after %u us: a mix: %.300s\n", tries, delay,
			       what);
			/* Repaired by a whole apply, to go on from a known state. */
			if (!ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "apply %s", cur ? pb : pa), 0,
				       "apply after a mix"))
				break;
			cur = !cur;
		}
	}
	printf("    %d kills in %.1f s: old state %d, new state %d, mix %d\n", tries, rl_now() - t0,
	       old, new, mix);
	ASSERT_EQ(mix, 0, "no kill left the new policy with the old rules, or the reverse");
	ASSERT_TRUE(old > 0 && new > 0, "kills landed before and after the swap");
	/* Run to the end, the other file: its state, whatever the kills left. */
	ASSERT_EQ(rl_ns_cli(&ns, NULL, NULL, "apply %s", cur ? pa : pb), 0, "a whole apply");
	ASSERT_EQ(kill_state(&ns, what, sizeof(what)), !cur, what);
out:
	rl_ns_destroy(&ns);
	if (*pa)
		unlink(pa);
	if (*pb)
		unlink(pb);
}

/*
 * A rule's keys in the file are its flags on the command line: the same
 * rule from "name: r" and KEY: VALUE lines as from the words "r --KEY VALUE",
 * or the same refusal: rule add's message, after "FILE:LINE: eth0: rule r: ",
 * at the line of the key it is about, named as the key ("dport: ...",
 * "dport needs --proto tcp ..."), or at the rule's line as it is.
 */
TEST(apply_rule_key_is_the_flag)
{
	static const struct {
		const char *keys; /* the rule's lines after "- name: r", from line 6 */
		const char *words; /* the same after "rule add IFACE r" */
		int line; /* of the key a refusal is about; 5: the rule's */
	} cases[] = {
		{ "proto: tcp\ndport: 443\nrate: 10\n", "--proto tcp --dport 443 --rate 10", 0 },
		{ "src: [10.0.0.0/8, '2001:db8::/32']\ndeny: true\n",
		  "--src 10.0.0.0/8 --src 2001:db8::/32 --deny", 0 },
		{ "src: []\nallow: true\n", "--src none --allow", 0 },
		{ "tcp-flags: SA/SA\nproto: tcp\nrate: 1mbit\nburst: 3000\nblock: 1m\n",
		  "--tcp-flags SA/SA --proto tcp --rate 1mbit --burst 3000 --block 1m", 0 },
		{ "deny: true\naction: dry-run\n", "--deny --action dry-run", 0 },
		{ "allow: false\nrate: 5/s\nalgo: gcra\n", "--rate 5/s --algo gcra", 0 },
		/* The value's refusals: at the key. */
		{ "proto: tcp\ndport: 99999\nallow: true\n", "--proto tcp --dport 99999 --allow",
		  7 },
		{ "src: 10.0.0.1/8\ndeny: true\n", "--src 10.0.0.1/8 --deny", 6 },
		{ "deny: true\nsrc: [10.0.0.0/8, x]\n", "--deny --src 10.0.0.0/8 --src x", 7 },
		{ "rate: ten\n", "--rate ten", 6 },
		{ "window: 48h\nrate: 10\nalgo: fixed-window\n",
		  "--window 48h --rate 10 --algo fixed-window", 6 },
		/* The rule's as a whole: at the key it is about... */
		{ "dport: 80\nallow: true\n", "--dport 80 --allow", 6 },
		{ "proto: udp\ntcp-flags: syn\ndeny: true\n", "--proto udp --tcp-flags syn --deny",
		  7 },
		{ "deny: true\nallow: true\n", "--deny --allow", 7 },
		{ "deny: true\nrate: 10\n", "--deny --rate 10", 6 },
		{ "deny: true\nblock: 1s\n", "--deny --block 1s", 7 },
		{ "allow: true\non-insert-fail: drop\n", "--allow --on-insert-fail drop", 7 },
		{ "rate: 10\nclock: coarse\n", "--rate 10 --clock coarse", 7 },
		{ "rate: 1mbit\nburst: 100\n", "--rate 1mbit --burst 100", 7 },
		{ "rate: 2.5\nalgo: fixed-window\n", "--rate 2.5 --algo fixed-window", 6 },
		{ "rate: 10\nalgo: fixed-window\nburst: 5\n",
		  "--rate 10 --algo fixed-window --burst 5", 8 },
		/* ... or at the rule, about none. */
		{ "proto: tcp\n", "--proto tcp", 5 },
		{ "burst: 5\n", "--burst 5", 5 },
	};
	char path[64], text[512], cli_err[RL_ERRLEN], err[RL_ERRLEN], want[600], a[1024], b[1024];

	/* src: [] warns that the rule matches nothing, twice: expected (the runner resets it). */
	rl_verbose = -1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *copy = strdup(cases[i].words), *save = NULL, *words[32] = { "r" };
		const char *k = cases[i].keys;
		size_t n = 1, off;
		struct rl_apply_file f;
		struct rl_rule r;
		int ret1, ret2;

		if (!ASSERT_TRUE(copy != NULL, "strdup"))
			return;
		for (char *t = strtok_r(copy, " ", &save); t && n < 31;
		     t = strtok_r(NULL, " ", &save))
			words[n++] = t;
		words[n] = NULL;
		off = (size_t)snprintf(
			text, sizeof(text),
			"interfaces:\n  eth0:\n    rate: 10\n    rules:\n      - name: r\n");
		/* Each key line indented under the rule. */
		while (*k && off < sizeof(text)) {
			size_t len = strcspn(k, "\n");

			off += (size_t)snprintf(text + off, sizeof(text) - off, "        %.*s\n",
						(int)len, k);
			k += len + (k[len] == '\n');
		}
		cli_err[0] = err[0] = '\0';
		ret1 = rl_rule_parse(&r, NULL, (const char *const *)words, cli_err,
				     sizeof(cli_err));
		if (!write_file(path, sizeof(path), "%s", text)) {
			free(copy);
			if (!ret1)
				rl_rule_free(&r);
			return;
		}
		ret2 = rl_apply_load(&f, path, err, sizeof(err));
		unlink(path);
		ASSERT_EQ(ret2, ret1, cases[i].words);
		if (!ret1 && !ret2) {
			rl_rule_format(&r, a, sizeof(a));
			rl_rule_format(&f.ifs[0].rules.rules[0], b, sizeof(b));
			ASSERT_STREQ(b, a, cases[i].words);
			ASSERT_EQ(cases[i].line, 0, "the case expects a refusal");
		} else if (ret1 && ret2) {
			/* rule add names the option "--KEY"; the file, at its key, "KEY". */
			snprintf(want, sizeof(want), "%s:%d: eth0: rule r: %s", path, cases[i].line,
				 cli_err +
					 (cases[i].line > 5 && !strncmp(cli_err, "--", 2) ? 2 : 0));
			ASSERT_STREQ(err, want, cases[i].words);
		}
		if (!ret1)
			rl_rule_free(&r);
		if (!ret2)
			rl_apply_free(&f);
		free(copy);
	}
}
