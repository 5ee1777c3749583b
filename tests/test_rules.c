// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rules in userspace (user/lib/rules.c, include/rl_rules.h, include/rl_block.h,
 * the rules simulator in user/lib/trace.c): parsing and every refusal with its
 * message, prefix files, printing back, the rule set's errors and limits,
 * matching field by field, block durations to the ns, and simulate --rules
 * through the built binary.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "json_writer.h"
#include "opts.h"
#include "rl_block.h"
#include "rules.h"
#include "source.h"
#include "log.h"
#include "test.h"
#include "trace.h"

#define NSEC	      1000000000ULL
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Parse "NAME --opt val ..." (split at spaces) into @r. */
static int parse_str(struct rl_rule *r, const char **before, const char *s, char *err,
		     size_t errlen)
{
	char *copy = strdup(s), *save = NULL, *words[64];
	size_t n = 0;
	int ret;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, " ", &save); t && n < ARRAY_SIZE(words) - 1;
	     t = strtok_r(NULL, " ", &save))
		words[n++] = t;
	words[n] = NULL;
	err[0] = '\0';
	ret = rl_rule_parse(r, before, (const char *const *)words, err, errlen);
	/* --before's NAME points into the words: keep it valid for the caller. */
	if (!ret && before && *before)
		*before = strdup(*before);
	free(copy);
	return ret;
}

/* A new temporary file holding @text (NULL: empty); its name in @path. */
static bool tmp_file(const char *text, char *path, size_t len)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/rl-test-rules-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rl_test_fail(__FILE__, __LINE__, "mkstemp failed");
		return false;
	}
	if (text)
		fputs(text, f);
	fclose(f);
	return true;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A packet as rules see it. */
static struct rl_pkt_info pkt(const char *src, const char *proto, int dport, const char *flags)
{
	struct rl_pkt_info p;

	memset(&p, 0, sizeof(p));
	if (rl_key_parse(src, &p.src))
		rl_test_fail(__FILE__, __LINE__, "bad address %s", src);
	if (proto) {
		rl_parse_proto(proto, &p.proto);
		p.info = RL_PKT_PROTO;
	}
	if (dport >= 0) {
		p.info |= RL_PKT_L4;
		p.dport = (__u16)dport;
	}
	if (flags && rl_parse_tcp_flag_letters(flags, &p.tcp_flags))
		rl_test_fail(__FILE__, __LINE__, "bad flags %s", flags);
	return p;
}

/* ---------------------------------------------------------------------------
 * Parsing.
 */

TEST(rules_parse_fields)
{
	const char *before = NULL;
	char err[RL_ERRLEN];
	struct rl_rule r;

	if (!ASSERT_OK(
		    parse_str(&r, &before,
			      "web --src 198.18.0.0/24,2001:db8::/32 --src 198.18.1.7 --proto tcp "
			      "--dport 443-444 --tcp-flags syn --algo gcra --rate 50 --burst 10 "
			      "--prefix4 24 --block 1500ms --action dry-run --before dns",
			      err, sizeof(err)),
		    err))
		return;
	ASSERT_STREQ(r.name, "web", "name");
	ASSERT_STREQ(before, "dns", "--before");
	ASSERT_EQ(r.n4, 2, "two IPv4 prefixes");
	ASSERT_EQ(r.src4[0].addr, htonl(0xc6120000), "198.18.0.0");
	ASSERT_EQ(r.src4[0].len, 24, "/24");
	ASSERT_EQ(r.src4[1].addr, htonl(0xc6120107), "198.18.1.7");
	ASSERT_EQ(r.src4[1].len, 32, "an address is /32");
	ASSERT_EQ(r.n6, 1, "one IPv6 prefix");
	ASSERT_EQ(r.src6[0].len, 32, "/32");
	ASSERT_EQ(r.l4.fields, RL_MATCH_PROTO | RL_MATCH_DPORT | RL_MATCH_FLAGS, "fields");
	ASSERT_EQ(r.l4.proto, 6, "tcp");
	ASSERT_EQ(r.l4.dport_lo, 443, "lo");
	ASSERT_EQ(r.l4.dport_hi, 444, "hi");
	ASSERT_EQ(r.l4.tcp_value, RL_TCP_SYN, "syn: S set");
	ASSERT_EQ(r.l4.tcp_mask, RL_TCP_SYN | RL_TCP_ACK, "syn: of S and A");
	ASSERT_EQ(r.action, RL_RULE_LIMIT, "a limit rule");
	ASSERT_EQ(r.pol.algo, RL_ALGO_GCRA, "algo");
	ASSERT_EQ(r.pol.prefix4, 24, "prefix4");
	ASSERT_EQ(r.block_ns, 1500000000ULL, "block");
	ASSERT_EQ(r.o.action, RL_ACTION_DRY_RUN, "dry-run");
	ASSERT_EQ(r.params.tau, 10 * r.params.unit_cost, "params computed");
	rl_rule_free(&r);
	free((char *)before);

	/* The simplest rules; --before absent. */
	before = "x";
	if (ASSERT_OK(parse_str(&r, &before, "ok --allow", err, sizeof(err)), err)) {
		ASSERT_EQ(r.action, RL_RULE_ALLOW, "allow");
		ASSERT_EQ(r.n4 + r.n6 + r.l4.fields, 0, "matches everything");
		ASSERT_TRUE(before == NULL, "no --before");
		rl_rule_free(&r);
	}
	if (ASSERT_OK(parse_str(&r, NULL, "A.b-9_ --proto 44 --deny", err, sizeof(err)), err)) {
		ASSERT_EQ(r.action, RL_RULE_DENY, "deny");
		ASSERT_EQ(r.l4.proto, 44, "a protocol number");
		rl_rule_free(&r);
	}
	/* IPv4-mapped IPv6 prefixes are the IPv4 prefix they stand for. */
	if (ASSERT_OK(parse_str(&r, NULL, "m --src ::ffff:198.18.0.0/112 --deny", err, sizeof(err)),
		      err)) {
		ASSERT_EQ(r.n4, 1, "kept as IPv4");
		ASSERT_EQ(r.n6, 0, "not IPv6");
		ASSERT_EQ(r.src4[0].len, 16, "/112 is /16");
		rl_rule_free(&r);
	}
}

TEST(rules_tcp_flags_forms)
{
	static const struct {
		const char *arg;
		__u8 value, mask;
	} cases[] = {
		{ "syn", 0x02, 0x12 },
		{ "S/SA", 0x02, 0x12 },
		{ "SA/SA", 0x12, 0x12 },
		{ "R/R", 0x04, 0x04 },
		{ "F/", 0x01, 0x01 },
		{ "F", 0x01, 0x01 },
		{ "/A", 0x00, 0x10 },
		{ "./A", 0x00, 0x10 },
		{ "FSRPAUEW/FSRPAUEW", 0xff, 0xff },
		{ "sa/sa", 0x12, 0x12 },
	};
	char err[RL_ERRLEN], line[128];
	struct rl_rule r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(line, sizeof(line), "t --proto tcp --tcp-flags %s --deny", cases[i].arg);
		if (!ASSERT_OK(parse_str(&r, NULL, line, err, sizeof(err)), line))
			continue;
		ASSERT_EQ(r.l4.tcp_value, cases[i].value, cases[i].arg);
		ASSERT_EQ(r.l4.tcp_mask, cases[i].mask, cases[i].arg);
		rl_rule_free(&r);
	}
}

/* Each refusal, and the words of its message. */
TEST(rules_parse_errors)
{
	static const struct {
		const char *words;
		const char *why[2];
	} cases[] = {
		/* CIDRs */
		{ "r --src 198.18.0.1/15 --allow",
		  { "'198.18.0.1/15' has host bits set", "198.18.0.0/15" } },
		{ "r --src 2001:db8::1/32 --allow",
		  { "'2001:db8::1/32' has host bits set", "2001:db8::/32" } },
		{ "r --src 10.0.0.300/8 --allow",
		  { "'10.0.0.300/8' is not an IPv4 or IPv6 CIDR" } },
		{ "r --src 10.0.0.0/33 --allow",
		  { "'10.0.0.0/33'", "prefix length '33' is not 0-32" } },
		{ "r --src 2001:db8::/129 --allow", { "prefix length '129' is not 0-128" } },
		{ "r --src 10.0.0.0/ --allow", { "prefix length" } },
		{ "r --src 10.0.0.0/8x --allow", { "prefix length '8x'" } },
		{ "r --src example.com --allow", { "'example.com' is not" } },
		{ "r --src 10.0.0.0/8,,10.1.0.0/16 --allow", { "empty CIDR" } },
		{ "r --src 10.0.0.0/8, --allow", { "empty CIDR" } },
		{ "r --src 10.0.0.0/8,10.1.2.3/16 --allow", { "'10.1.2.3/16' has host bits set" } },
		/* ports */
		{ "r --proto tcp --dport 65536 --allow", { "--dport", "0 to 65535" } },
		{ "r --proto tcp --dport 70000 --allow", { "70000" } },
		{ "r --proto tcp --dport -1 --allow", { "--dport" } },
		{ "r --proto tcp --dport 443-80 --allow", { "reversed range", "80-443" } },
		{ "r --proto tcp --dport 1-65536 --allow", { "0 to 65535" } },
		{ "r --proto tcp --dport http --allow", { "--dport", "'http'" } },
		{ "r --dport 53 --allow", { "--dport needs --proto tcp or --proto udp" } },
		{ "r --proto icmp --dport 53 --allow",
		  { "--dport needs --proto tcp or --proto udp" } },
		/* flags */
		{ "r --tcp-flags syn --allow", { "--tcp-flags needs --proto tcp" } },
		{ "r --proto udp --tcp-flags syn --allow", { "--tcp-flags needs --proto tcp" } },
		{ "r --proto tcp --tcp-flags SX/S --allow",
		  { "--tcp-flags", "tcpdump's letters" } },
		{ "r --proto tcp --tcp-flags S/A --allow", { "must be in MASK" } },
		{ "r --proto tcp --tcp-flags / --allow", { "empty mask" } },
		{ "r --proto tcp --tcp-flags ack --allow", { "'ack'" } },
		/* protocols */
		{ "r --proto 256 --allow", { "--proto", "'256' is not tcp, udp, icmp, icmpv6" } },
		{ "r --proto sctp --allow", { "'sctp'" } },
		/* actions */
		{ "r --allow --deny", { "--allow and --deny are two actions" } },
		{ "r --deny --allow", { "two actions" } },
		{ "r --allow --rate 10", { "--allow and --rate are two actions" } },
		{ "r --deny --burst 5", { "--deny and --burst are two actions" } },
		{ "r --deny --block 1s", { "--block needs a limit policy", "--deny" } },
		{ "r --allow --block 1s", { "--block needs a limit policy", "--allow" } },
		{ "r --src 10.0.0.0/8", { "no action" } },
		{ "r", { "no action" } },
		{ "r --block 1s", { "no action" } },
		{ "r --burst 5", { "needs --rate", "--burst" } },
		{ "r --rate 10 --block 0s", { "--block", "out of range" } },
		{ "r --rate 10 --block 8785h", { "--block", "out of range" } },
		{ "r --rate 10 --block 5", { "--block", "unit" } },
		{ "r --allow --action dry-run", { "--action has no meaning with --allow" } },
		{ "r --deny --on-insert-fail drop",
		  { "--on-insert-fail has no meaning with --deny" } },
		{ "r --rate 10 --clock coarse", { "--clock applies to every packet" } },
		{ "r --rate 10 --malformed pass", { "--malformed applies" } },
		/* the policy's own checks */
		{ "r --algo fixed-window --rate 10 --burst 5",
		  { "--burst has no meaning for fixed-window" } },
		{ "r --rate 0", { "--rate", "zero" } },
		{ "r --rate 1mbit --burst 100", { "full-size frame" } },
		/* names */
		{ "default --allow", { "'default' is the last rule" } },
		{ "bad/name --allow", { "rule name 'bad/name' may hold only" } },
		{ "r:1 --allow", { "'r:1'" } },
		{ "abcdefghijklmnopqrstuvwxyz012345 --allow", { "longer than 31 characters" } },
		{ "--allow", { "give the rule a NAME" } },
		{ "a b --allow", { "unexpected argument 'b'" } },
		/* options */
		{ "r --allow --before x", { "--before has no meaning here" } },
		{ "r --allow --frob", { "unknown option '--frob'" } },
		{ "r --proto tcp --proto udp --allow", { "--proto is given twice" } },
		{ "r --dport 1 --dport 2 --proto tcp --allow", { "--dport is given twice" } },
		{ "r --src-file /nonexistent/rl-prefixes --allow",
		  { "--src-file", "/nonexistent/rl-prefixes" } },
		{ "r --rate 10 --trace x", { "unknown option '--trace'" } },
	};
	char err[RL_ERRLEN];
	struct rl_rule r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int ret = parse_str(&r, NULL, cases[i].words, err, sizeof(err));

		ASSERT_EQ(ret, -EINVAL, cases[i].words);
		for (int k = 0; k < 2 && cases[i].why[k]; k++)
			ASSERT_CONTAINS(err, cases[i].why[k], cases[i].words);
		/* On error the rule is left empty: nothing to free, nothing half-built. */
		ASSERT_TRUE(!r.src4 && !r.src6 && !r.name[0], "rule freed");
	}
}

/* Options of a rule are refused outside one (no rule to write into). */
TEST(rules_options_need_a_rule)
{
	const struct rl_opt *o = rl_opt_find("src", RL_G_RULE);
	char err[RL_ERRLEN];
	struct rl_args a;

	if (!ASSERT_TRUE(o != NULL, "--src is a rule option"))
		return;
	rl_args_defaults(&a);
	ASSERT_TRUE(rl_opt_set(&a, o, "10.0.0.0/8", err, sizeof(err)) < 0, "refused");
	ASSERT_CONTAINS(err, "is an option of a rule", "says why");
	ASSERT_TRUE(rl_opt_find("src", RL_G_POLICY | RL_G_SIMULATE) == NULL, "not elsewhere");
}

/* ---------------------------------------------------------------------------
 * Prefix files.
 */

/* A file of @n prefixes, IPv4 /24s and IPv6 /48s, with comments; line @bad (1-based) replaced. */
static bool prefix_file(size_t n, size_t bad, const char *bad_text, char *path, size_t len)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/rl-test-prefixes-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rl_test_fail(__FILE__, __LINE__, "mkstemp failed");
		return false;
	}
	for (size_t i = 1; i <= n; i++) {
		if (i == bad)
			fprintf(f, "%s\n", bad_text);
		else if (i % 1000 == 0)
			fprintf(f, "# block %zu\n", i / 1000);
		else if (i % 1000 == 1)
			fprintf(f, "\n");
		else if (i % 4)
			fprintf(f, "%zu.%zu.%zu.0/24\n", 10 + (i >> 16) % 100, (i >> 8) & 255,
				i & 255);
		else
			fprintf(f, "  2001:db8:%zx::/48 # a comment\n", i & 0xffff);
	}
	fclose(f);
	return true;
}

TEST(rules_src_file_100k_fast)
{
	char path[64], words[128], err[RL_ERRLEN];
	struct rl_rule r;
	double t0, dt;
	int ret;

	if (!prefix_file(100000, 0, NULL, path, sizeof(path)))
		return;
	snprintf(words, sizeof(words), "big --src-file %s --allow", path);
	t0 = now_s();
	ret = parse_str(&r, NULL, words, err, sizeof(err));
	dt = now_s() - t0;
	unlink(path);
	if (!ASSERT_OK(ret, err))
		return;
	/* 100000 lines: 100 comment, 100 blank; of the rest one in four IPv6 (some repeat). */
	ASSERT_EQ(r.n4, 74900, "IPv4 prefixes, each once");
	ASSERT_EQ(r.n6, 16353, "IPv6 prefixes, each once");
	printf("    100000 lines parsed and prepared in %.3f s\n", dt);
	ASSERT_TRUE(dt < 0.5, "well under a second");
	rl_rule_free(&r);
}

TEST(rules_src_file_bad_line)
{
	static const struct {
		const char *text;
		const char *why;
	} bad[] = {
		{ "198.18.0.1/15", "'198.18.0.1/15' has host bits set" },
		{ "10.1.2.0/24 10.1.3.0/24", "one CIDR per line" },
		{ "10.1.2.0/24,10.1.3.0/24", "one CIDR per line ('10.1.2.0/24,10.1.3.0/24')" },
		{ "2001:db8::/200", "prefix length '200'" },
	};
	char path[64], words[128], err[RL_ERRLEN], want[96];
	struct rl_rule r;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (!prefix_file(100000, 73421, bad[i].text, path, sizeof(path)))
			return;
		snprintf(words, sizeof(words), "big --src-file %s --allow", path);
		ASSERT_EQ(parse_str(&r, NULL, words, err, sizeof(err)), -EINVAL, bad[i].text);
		unlink(path);
		snprintf(want, sizeof(want), "--src-file: %s:73421: ", path);
		ASSERT_CONTAINS(err, want, "names FILE:LINE");
		ASSERT_CONTAINS(err, bad[i].why, bad[i].text);
	}
}

TEST(rules_src_file_forms)
{
	char path[64], words[160], err[RL_ERRLEN];
	struct rl_rule r;

	/* Comments, blank lines, CRLF, spaces, no newline at the end; plus --src. */
	if (!tmp_file("# allow list\n\n  198.18.0.0/16\r\n\t2001:db8::/32 # docs\n198.18.0.0/16\n"
		      "#\n10.0.0.1",
		      path, sizeof(path)))
		return;
	snprintf(words, sizeof(words), "f --src 192.0.2.0/24 --src-file %s --src-file %s --deny",
		 path, path);
	if (ASSERT_OK(parse_str(&r, NULL, words, err, sizeof(err)), err)) {
		ASSERT_EQ(r.n4, 3, "192.0.2.0/24, 198.18.0.0/16, 10.0.0.1/32, each once");
		ASSERT_EQ(r.n6, 1, "2001:db8::/32");
		rl_rule_free(&r);
	}
	unlink(path);
	/* An empty file: the rule has a source match that holds nothing. */
	if (!tmp_file("# nothing yet\n", path, sizeof(path)))
		return;
	snprintf(words, sizeof(words), "e --src-file %s --deny", path);
	if (ASSERT_OK(parse_str(&r, NULL, words, err, sizeof(err)), err)) {
		ASSERT_EQ(r.n4 + r.n6, 0, "no prefixes");
		ASSERT_TRUE(rl_rule_src_empty(&r), "an empty source list, not none given");
		rl_rule_free(&r);
	}
	unlink(path);
}

/* ---------------------------------------------------------------------------
 * Printing back.
 */

TEST(rules_format_round_trip)
{
	static const char *const rules[] = {
		"a --allow",
		"b --src 198.18.0.0/15,2001:db8::/32 --deny",
		"c --src 198.18.0.7/32 --proto udp --dport 53 --rate 50/s",
		"d --proto tcp --dport 1024-65535 --tcp-flags syn --algo gcra --rate 10/s --burst 5 "
		"--prefix4 24 --prefix6 48 --block 90m",
		"e --proto tcp --tcp-flags SA/SA --deny --action dry-run",
		"f --proto tcp --tcp-flags /R --algo sliding-window --rate 100mbit --window 250ms "
		"--on-insert-fail drop --block 1500ns --action dry-run",
		"g --proto 44 --algo fixed-window --rate 0.5/s --window 2m",
		"h --proto icmpv6 --rate 0.5/s --initial 0",
	};
	char err[RL_ERRLEN], buf[512], buf2[512];
	struct rl_rule r, r2;

	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		size_t n;

		if (!ASSERT_OK(parse_str(&r, NULL, rules[i], err, sizeof(err)), err))
			continue;
		n = rl_rule_format(&r, buf, sizeof(buf));
		ASSERT_EQ(n, strlen(buf), "length returned");
		ASSERT_STREQ(buf, rules[i], "printed back as written");
		if (ASSERT_OK(parse_str(&r2, NULL, buf, err, sizeof(err)), err)) {
			rl_rule_format(&r2, buf2, sizeof(buf2));
			ASSERT_STREQ(buf2, buf, "and parsed again the same");
			ASSERT_TRUE(!memcmp(&r.l4, &r2.l4, sizeof(r.l4)), "same match");
			ASSERT_TRUE(!memcmp(&r.params, &r2.params, sizeof(r.params)),
				    "same parameters");
			ASSERT_EQ(r.block_ns, r2.block_ns, "same block");
			rl_rule_free(&r2);
		}
		/* Too small a buffer: cut, NUL-terminated, the whole length returned. */
		ASSERT_EQ(rl_rule_format(&r, buf2, 5), n, "needed length");
		ASSERT_TRUE(strlen(buf2) == 4 && !strncmp(buf2, buf, 4), "cut to the buffer");
		rl_rule_free(&r);
	}
	/* Prefixes come back sorted, each once. */
	if (ASSERT_OK(parse_str(&r, NULL, "s --src 10.2.0.0/16,10.1.0.0/16,10.2.0.0/16 --deny", err,
				sizeof(err)),
		      err)) {
		rl_rule_format(&r, buf, sizeof(buf));
		ASSERT_STREQ(buf, "s --src 10.1.0.0/16,10.2.0.0/16 --deny", "a set");
		rl_rule_free(&r);
	}
}

TEST(rules_json)
{
	char err[RL_ERRLEN], *out = NULL;
	size_t len = 0;
	struct rl_json w;
	struct rl_rule r;
	FILE *f;

	if (!ASSERT_OK(parse_str(&r, NULL,
				 "j --src 198.18.0.0/15,2001:db8::/32 --proto tcp --dport 80-81 "
				 "--tcp-flags S/SA --rate 10 --burst 4 --block 2s",
				 err, sizeof(err)),
		       err))
		return;
	f = open_memstream(&out, &len);
	if (!ASSERT_TRUE(f != NULL, "open_memstream")) {
		rl_rule_free(&r);
		return;
	}
	jw_init(&w, f);
	rl_rule_json(&w, &r);
	jw_end(&w);
	fclose(f);
	ASSERT_STREQ(out,
		     "{\"name\":\"j\",\"match\":{\"src\":[\"198.18.0.0/15\",\"2001:db8::/32\"],"
		     "\"proto\":\"tcp\",\"dport\":{\"lo\":80,\"hi\":81},"
		     "\"tcp_flags\":{\"value\":\"S\",\"mask\":\"SA\"}},\"action\":\"limit\","
		     "\"dry_run\":false,\"policy\":{\"algo\":\"token-bucket\",\"rate\":\"10/s\","
		     "\"burst\":4,\"prefix4\":32,\"prefix6\":64},\"block_ns\":2000000000}\n",
		     "the rule as JSON");
	free(out);
	rl_rule_free(&r);
}

/* ---------------------------------------------------------------------------
 * The rule set.
 */

static int add_str(struct rl_ruleset *s, const char *words, char *err, size_t errlen)
{
	const char *before = NULL;
	struct rl_rule r;
	int ret = parse_str(&r, &before, words, err, errlen);

	if (ret)
		return ret;
	ret = rl_ruleset_add(s, &r, before, err, errlen);
	rl_rule_free(&r);
	free((char *)before);
	return ret;
}

static void names(const struct rl_ruleset *s, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? " " : "",
			 s->rules[i].name);
}

TEST(rules_set_add_del)
{
	struct rl_policy pol;
	struct rl_ruleset s;
	char err[RL_ERRLEN], list[256];

	rl_policy_defaults(&pol);
	ASSERT_TRUE(rl_ruleset_init(&s, &pol, NULL, err, sizeof(err)) < 0, "no rate, no default");
	ASSERT_CONTAINS(err, "--rate is required", "the default's policy is checked");
	pol.rate_num = 100;
	pol.rate_set = true;
	if (!ASSERT_OK(rl_ruleset_init(&s, &pol, NULL, err, sizeof(err)), err))
		return;
	names(&s, list, sizeof(list));
	ASSERT_STREQ(list, "default", "only default");

	ASSERT_OK(add_str(&s, "a --allow", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "b --deny", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "c --deny --before a", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "d --deny --before default", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "e --deny --before b", err, sizeof(err)), err);
	names(&s, list, sizeof(list));
	ASSERT_STREQ(list, "c a e b d default", "in order, default last");

	ASSERT_EQ(add_str(&s, "a --deny", err, sizeof(err)), -EEXIST, "duplicate");
	ASSERT_CONTAINS(err, "a rule named 'a' exists", "duplicate");
	ASSERT_EQ(add_str(&s, "f --deny --before zz", err, sizeof(err)), -ENOENT, "unknown");
	ASSERT_CONTAINS(err, "--before zz: no rule of that name", "unknown --before");
	ASSERT_EQ(rl_ruleset_del(&s, "zz", err, sizeof(err)), -ENOENT, "del unknown");
	ASSERT_CONTAINS(err, "no rule named 'zz'", "del unknown");
	ASSERT_EQ(rl_ruleset_del(&s, "default", err, sizeof(err)), -EINVAL, "del default");
	ASSERT_CONTAINS(err, "'default' cannot be deleted", "del default");
	ASSERT_OK(rl_ruleset_del(&s, "e", err, sizeof(err)), err);
	ASSERT_OK(rl_ruleset_del(&s, "c", err, sizeof(err)), err);
	names(&s, list, sizeof(list));
	ASSERT_STREQ(list, "a b d default", "after del");
	/* A rule named default cannot be made by hand either. */
	{
		struct rl_rule r;

		rl_rule_init(&r);
		snprintf(r.name, sizeof(r.name), "default");
		r.action = RL_RULE_DENY;
		ASSERT_EQ(rl_ruleset_add(&s, &r, NULL, err, sizeof(err)), -EINVAL, "default");
		ASSERT_CONTAINS(err, "always a rule 'default'", "default");
	}
	rl_ruleset_free(&s);
}

TEST(rules_set_limits)
{
	struct rl_policy pol;
	struct rl_ruleset s;
	struct rl_rule r;
	char err[RL_ERRLEN], w[64];

	rl_policy_defaults(&pol);
	pol.rate_num = 10;
	pol.rate_set = true;
	if (!ASSERT_OK(rl_ruleset_init(&s, &pol, NULL, err, sizeof(err)), err))
		return;
	for (int i = 0; i < RL_MAX_RULES - 1; i++) {
		snprintf(w, sizeof(w), "r%d --deny", i);
		if (!ASSERT_OK(add_str(&s, w, err, sizeof(err)), err))
			break;
	}
	ASSERT_EQ(s.n, RL_MAX_RULES, "64 with default");
	ASSERT_EQ(add_str(&s, "one-more --deny", err, sizeof(err)), -ENOSPC, "65th");
	ASSERT_CONTAINS(err, "more than the 64 of an interface", "says the limit");
	rl_ruleset_free(&s);

	/* Prefixes: 600000 + 600000 is over the million of an interface. */
	if (!ASSERT_OK(rl_ruleset_init(&s, &pol, NULL, err, sizeof(err)), err))
		return;
	for (int k = 0; k < 2; k++) {
		rl_rule_init(&r);
		snprintf(r.name, sizeof(r.name), "big%d", k);
		r.action = RL_RULE_DENY;
		r.src4 = calloc(600000, sizeof(*r.src4));
		if (!ASSERT_TRUE(r.src4 != NULL, "calloc"))
			break;
		r.n4 = r.cap4 = 600000;
		for (__u32 i = 0; i < 600000; i++)
			r.src4[i] = (struct rl_prefix4){ htonl(((__u32)k << 31) | (i << 8)), 24 };
		if (!ASSERT_OK(rl_rule_prepare(&r, err, sizeof(err)), err)) {
			rl_rule_free(&r);
			break;
		}
		if (k == 0) {
			ASSERT_OK(rl_ruleset_add(&s, &r, NULL, err, sizeof(err)), err);
			ASSERT_EQ(s.nprefixes, 600000, "counted");
		} else {
			ASSERT_EQ(rl_ruleset_add(&s, &r, NULL, err, sizeof(err)), -ENOSPC, "over");
			ASSERT_CONTAINS(err, "1200000 source prefixes, more than the 1000000",
					"why");
			ASSERT_EQ(r.n4, 600000, "the rule is still the caller's");
		}
		rl_rule_free(&r);
	}
	ASSERT_OK(rl_ruleset_del(&s, "big0", err, sizeof(err)), err);
	ASSERT_EQ(s.nprefixes, 0, "given back on del");
	rl_ruleset_free(&s);

	/* One rule over the million is refused when prepared. */
	rl_rule_init(&r);
	snprintf(r.name, sizeof(r.name), "huge");
	r.action = RL_RULE_DENY;
	r.src4 = calloc(RL_MAX_PREFIXES + 1, sizeof(*r.src4));
	if (ASSERT_TRUE(r.src4 != NULL, "calloc")) {
		r.n4 = r.cap4 = RL_MAX_PREFIXES + 1;
		for (__u32 i = 0; i < RL_MAX_PREFIXES + 1; i++)
			r.src4[i] = (struct rl_prefix4){ htonl(i << 8), 24 };
		ASSERT_EQ(rl_rule_prepare(&r, err, sizeof(err)), -ENOSPC, "too many in one rule");
		ASSERT_CONTAINS(err, "1000001 prefixes", "says how many");
	}
	rl_rule_free(&r);
}

/* ---------------------------------------------------------------------------
 * Matching.
 */

/* One rule against packets: each row a packet and whether it matches. */
struct match_case {
	const char *src, *proto;
	int dport;
	const char *flags;
	bool match;
};

static void check_matches(const char *rule, const struct match_case *c, size_t n)
{
	char err[RL_ERRLEN], what[256];
	struct rl_rule r;

	if (!ASSERT_OK(parse_str(&r, NULL, rule, err, sizeof(err)), err))
		return;
	for (size_t i = 0; i < n; i++) {
		struct rl_pkt_info p = pkt(c[i].src, c[i].proto, c[i].dport, c[i].flags);

		snprintf(what, sizeof(what), "%s: %s %s/%d %s", rule, c[i].src,
			 c[i].proto ? c[i].proto : "-", c[i].dport, c[i].flags ? c[i].flags : "");
		ASSERT_EQ(rl_rule_match(&r, &p), c[i].match, what);
	}
	rl_rule_free(&r);
}

TEST(rules_match_src)
{
	static const struct match_case c[] = {
		{ "198.18.0.1", NULL, -1, NULL, true },
		{ "198.19.255.255", NULL, -1, NULL, true },
		{ "198.17.255.255", NULL, -1, NULL, false },
		{ "198.20.0.0", NULL, -1, NULL, false },
		{ "192.0.2.77", NULL, -1, NULL, true },
		{ "192.0.2.78", NULL, -1, NULL, false },
		/* IPv4-mapped IPv6 sources are the IPv4 source */
		{ "::ffff:198.18.3.4", NULL, -1, NULL, true },
		{ "::ffff:198.20.3.4", NULL, -1, NULL, false },
		{ "2001:db8:1::1", NULL, -1, NULL, true },
		{ "2001:db8:1:ffff:ffff:ffff:ffff:ffff", NULL, -1, NULL, true },
		{ "2001:db8:2::", NULL, -1, NULL, false },
		/* 198.18.0.1 as the low bits of an IPv6 address is not an IPv4 source */
		{ "::c612:1", NULL, -1, NULL, false },
		{ "fe80::1", NULL, -1, NULL, false },
	};
	static const struct match_case v6all[] = {
		{ "2001:db8::1", NULL, -1, NULL, true },
		{ "::1", NULL, -1, NULL, true },
		/* ::/0 is every IPv6 source, not the IPv4 ones that share the key space */
		{ "198.18.0.1", NULL, -1, NULL, false },
		{ "::ffff:198.18.0.1", NULL, -1, NULL, false },
	};
	static const struct match_case v4all[] = {
		{ "0.0.0.0", NULL, -1, NULL, true },
		{ "255.255.255.255", NULL, -1, NULL, true },
		{ "2001:db8::1", NULL, -1, NULL, false },
	};

	char err[RL_ERRLEN];
	struct rl_pkt_info p;
	struct rl_rule r;

	check_matches("s --src 198.18.0.0/15,192.0.2.77,2001:db8:1::/48 --deny", c, ARRAY_SIZE(c));
	check_matches("s --src ::/0 --deny", v6all, ARRAY_SIZE(v6all));
	check_matches("s --src 0.0.0.0/0 --deny", v4all, ARRAY_SIZE(v4all));
	/* Written as IPv4-mapped IPv6, the prefix is IPv4: */
	check_matches("s --src ::ffff:192.0.2.77 --deny", c + 4, 2);

	/*
	 * A trace packet without SOURCE matches no --src, not even ::/0; a
	 * frame from ffff:...:ffff (the address such a packet holds) does, as
	 * in the kernel.
	 */
	if (ASSERT_OK(parse_str(&r, NULL, "n --src ::/0 --deny", err, sizeof(err)), err)) {
		memset(&p, 0, sizeof(p));
		rl_key_anon(&p.src);
		p.info = RL_PKT_NOSRC;
		ASSERT_TRUE(!rl_rule_match(&r, &p), "no source, no --src match");
		p.info = 0;
		ASSERT_TRUE(rl_rule_match(&r, &p), "ffff:...:ffff is in ::/0");
		rl_rule_free(&r);
	}
}

/*
 * An empty source list matches nothing, whatever the action: allow, deny and
 * limit rules fed from an empty file, --src none or --src '' (one word) let
 * every packet fall through to the rules after them. No --src at all is any
 * source. Each form prints back as --src none and parses to the same rule.
 */
TEST(rules_empty_src_matches_nothing)
{
	static const char *const actions[] = { "--allow", "--deny", "--rate 10/s --burst 2" };
	static const char *const srcs[] = { "198.18.0.1", "0.0.0.0", "2001:db8::1", "fe80::1",
					    "::ffff:198.18.0.1" };
	char path[64], err[RL_ERRLEN], words[256], back[256], again[256];
	const char *forms[3];
	struct rl_rule r, r2;

	/* The warnings these rules provoke are the point, not news (the runner resets it). */
	rl_verbose = -1;
	if (!tmp_file("# a feed that came back empty\n\n", path, sizeof(path)))
		return;
	snprintf(words, sizeof(words), "--src-file %s", path);
	forms[0] = words;
	forms[1] = "--src none";
	forms[2] = NULL; /* --src '' below, as one empty word */
	for (size_t a = 0; a < ARRAY_SIZE(actions); a++) {
		for (size_t f = 0; f < ARRAY_SIZE(forms); f++) {
			char rule[320], what[400];
			int ret;

			if (forms[f]) {
				snprintf(rule, sizeof(rule), "e %s %s", forms[f], actions[a]);
				ret = parse_str(&r, NULL, rule, err, sizeof(err));
			} else {
				const char *w[8] = { "e", "--src", "" };
				char *copy = strdup(actions[a]), *save = NULL;
				size_t n = 3;

				snprintf(rule, sizeof(rule), "e --src '' %s", actions[a]);
				for (char *t = strtok_r(copy, " ", &save); t;
				     t = strtok_r(NULL, " ", &save))
					w[n++] = t;
				w[n] = NULL;
				ret = rl_rule_parse(&r, NULL, w, err, sizeof(err));
				free(copy);
			}
			if (!ASSERT_OK(ret, rule))
				continue;
			for (size_t i = 0; i < ARRAY_SIZE(srcs); i++) {
				struct rl_pkt_info p = pkt(srcs[i], "udp", 53, NULL);

				snprintf(what, sizeof(what), "%s matches no source: %s", rule,
					 srcs[i]);
				ASSERT_TRUE(!rl_rule_match(&r, &p), what);
			}
			rl_rule_format(&r, back, sizeof(back));
			ASSERT_CONTAINS(back, " --src none", "printed back as --src none");
			if (ASSERT_OK(parse_str(&r2, NULL, back, err, sizeof(err)), back)) {
				rl_rule_format(&r2, again, sizeof(again));
				ASSERT_STREQ(again, back, "--src none reads back to the same rule");
				ASSERT_TRUE(rl_rule_src_empty(&r2), "still empty");
				rl_rule_free(&r2);
			}
			rl_rule_free(&r);
		}
		/* No --src at all: any source. */
		snprintf(words, sizeof(words), "any %s", actions[a]);
		if (ASSERT_OK(parse_str(&r, NULL, words, err, sizeof(err)), words)) {
			struct rl_pkt_info p = pkt("198.18.0.1", "udp", 53, NULL);

			ASSERT_TRUE(rl_rule_match(&r, &p), "no --src: any source");
			ASSERT_TRUE(!rl_rule_src_empty(&r), "no source match given");
			rl_rule_free(&r);
		}
		snprintf(words, sizeof(words), "--src-file %s", path);
	}
	/* An empty list among prefixes is just the prefixes. */
	if (ASSERT_OK(parse_str(&r, NULL, "m --src none --src 198.18.0.0/24 --deny", err,
				sizeof(err)),
		      err)) {
		struct rl_pkt_info in = pkt("198.18.0.9", NULL, -1, NULL),
				   out = pkt("198.18.1.9", NULL, -1, NULL);

		ASSERT_TRUE(rl_rule_match(&r, &in) && !rl_rule_match(&r, &out), "the prefix alone");
		rl_rule_format(&r, back, sizeof(back));
		ASSERT_STREQ(back, "m --src 198.18.0.0/24 --deny", "no none printed");
		rl_rule_free(&r);
	}
	unlink(path);
}

TEST(rules_match_l4)
{
	static const struct match_case udp53[] = {
		{ "198.18.0.1", "udp", 53, NULL, true },
		{ "198.18.0.1", "udp", 52, NULL, false },
		{ "198.18.0.1", "udp", 54, NULL, false },
		{ "198.18.0.1", "tcp", 53, NULL, false },
		/* no L4 header (fragment after the first, or cut short): no port */
		{ "198.18.0.1", "udp", -1, NULL, false },
		/* no protocol at all (a trace line without PROTO) */
		{ "198.18.0.1", NULL, -1, NULL, false },
		{ "2001:db8::1", "udp", 53, NULL, true },
		/* IPv6 with an extension header first: its number, not udp */
		{ "2001:db8::1", "44", -1, NULL, false },
	};
	/* Range edges: lo - 1, lo, hi, hi + 1, and the ends of the port space. */
	static const struct match_case range[] = {
		{ "198.18.0.1", "tcp", 1023, NULL, false },
		{ "198.18.0.1", "tcp", 1024, NULL, true },
		{ "198.18.0.1", "tcp", 2048, NULL, true },
		{ "198.18.0.1", "tcp", 2049, NULL, false },
		{ "198.18.0.1", "tcp", 0, NULL, false },
		{ "198.18.0.1", "tcp", 65535, NULL, false },
	};
	static const struct match_case ends[] = {
		{ "198.18.0.1", "udp", 0, NULL, true },
		{ "198.18.0.1", "udp", 65535, NULL, true },
		{ "198.18.0.1", "udp", 1, NULL, false },
	};
	/* Every port: still not a packet that shows none. */
	static const struct match_case anyport[] = {
		{ "198.18.0.1", "udp", 0, NULL, true },
		{ "198.18.0.1", "udp", -1, NULL, false },
		{ "2001:db8::1", "udp", -1, NULL, false },
	};
	static const struct match_case syn[] = {
		{ "198.18.0.1", "tcp", 443, "S", true },
		{ "198.18.0.1", "tcp", 443, "SA", false },
		{ "198.18.0.1", "tcp", 443, "SE", true }, /* ECN-setup SYN */
		{ "198.18.0.1", "tcp", 443, "A", false },
		{ "198.18.0.1", "tcp", 443, ".", false },
		{ "198.18.0.1", "tcp", 80, "S", false },
		{ "198.18.0.1", "tcp", -1, NULL, false }, /* fragment: no flags */
		{ "198.18.0.1", "udp", 443, NULL, false },
	};
	static const struct match_case rst[] = {
		{ "198.18.0.1", "tcp", 1, "R", true },
		{ "198.18.0.1", "tcp", 1, "RA", true },
		{ "198.18.0.1", "tcp", 1, "S", false },
		{ "198.18.0.1", "tcp", 1, ".", false },
	};
	static const struct match_case noack[] = {
		/* no L4: flags unknown, not "none set" */
		{ "198.18.0.1", "tcp", -1, NULL, false },
		{ "198.18.0.1", "tcp", 1, ".", true },
		{ "198.18.0.1", "tcp", 1, "SFRPU", true },
		{ "198.18.0.1", "tcp", 1, "A", false },
	};
	static const struct match_case proto_only[] = {
		/* --proto alone matches fragments and packets with no port */
		{ "198.18.0.1", "tcp", -1, NULL, true },
		{ "198.18.0.1", "tcp", 80, "S", true },
		{ "198.18.0.1", "udp", 80, NULL, false },
		{ "198.18.0.1", NULL, -1, NULL, false },
	};
	static const struct match_case icmp[] = {
		{ "198.18.0.1", "icmp", 0, NULL, true },
		{ "198.18.0.1", "icmpv6", 0, NULL, false },
		{ "2001:db8::1", "icmpv6", 0, NULL, false },
	};
	static const struct match_case ext[] = {
		{ "2001:db8::1", "44", -1, NULL, true },
		{ "2001:db8::1", "0", -1, NULL, false },
	};
	static const struct match_case both[] = {
		/* source and port together: both must hold */
		{ "198.18.0.9", "udp", 53, NULL, true },
		{ "198.18.1.9", "udp", 53, NULL, false },
		{ "198.18.0.9", "udp", 54, NULL, false },
	};
	static const struct match_case any[] = {
		{ "198.18.0.9", NULL, -1, NULL, true },
		{ "2001:db8::1", "44", -1, NULL, true },
	};

	check_matches("u --proto udp --dport 53 --deny", udp53, ARRAY_SIZE(udp53));
	check_matches("r --proto tcp --dport 1024-2048 --deny", range, ARRAY_SIZE(range));
	check_matches("e --proto udp --dport 0-65535 --deny", ends, 2);
	check_matches("a --proto udp --dport 0-65535 --deny", anyport, ARRAY_SIZE(anyport));
	check_matches("e --proto udp --dport 0 --deny", ends, 1);
	check_matches("e --proto udp --dport 65535 --deny", ends + 1, 1);
	check_matches("s --proto tcp --dport 443 --tcp-flags syn --deny", syn, ARRAY_SIZE(syn));
	check_matches("r --proto tcp --tcp-flags R/R --deny", rst, ARRAY_SIZE(rst));
	check_matches("n --proto tcp --tcp-flags /A --deny", noack, ARRAY_SIZE(noack));
	check_matches("p --proto tcp --deny", proto_only, ARRAY_SIZE(proto_only));
	check_matches("i --proto icmp --deny", icmp, ARRAY_SIZE(icmp));
	check_matches("x --proto 44 --deny", ext, ARRAY_SIZE(ext));
	check_matches("b --src 198.18.0.0/24 --proto udp --dport 53 --deny", both,
		      ARRAY_SIZE(both));
	check_matches("a --deny", any, ARRAY_SIZE(any));
}

/* The range lookup agrees with testing each prefix, on random sets and sources. */
TEST(rules_match_ranges_vs_each)
{
	unsigned long long seed = rl_test_seed() ^ 0x52554c45ULL;
	char err[RL_ERRLEN];

	for (int round = 0; round < 50; round++) {
		struct rl_rule fast, slow;
		size_t n = 1 + rl_rand_below(&seed, 300), bad = 0;

		rl_rule_init(&fast);
		rl_rule_init(&slow);
		snprintf(fast.name, sizeof(fast.name), "f");
		fast.action = RL_RULE_DENY;
		for (size_t i = 0; i < n; i++) {
			char cidr[64];
			/* Clustered in 10.0.0.0/14 and 2001:db8::/44 so that they overlap. */
			unsigned int len4 = 8 + (unsigned int)rl_rand_below(&seed, 25);
			__u32 a4 = (0x0a000000U | (__u32)rl_rand_below(&seed, 1U << 18)) &
				   (len4 ? ~0U << (32 - len4) : 0);
			unsigned int len6 = 32 + (unsigned int)rl_rand_below(&seed, 97);
			struct in_addr in = { htonl(a4) };
			char a[INET6_ADDRSTRLEN];
			__u32 w[4] = { htonl(0x20010db8),
				       htonl((__u32)rl_rand_below(&seed, 1U << 20)),
				       (__u32)rl_rand(&seed), (__u32)rl_rand(&seed) };

			inet_ntop(AF_INET, &in, a, sizeof(a));
			snprintf(cidr, sizeof(cidr), "%s/%u", a, len4);
			ASSERT_OK(rl_rule_add_src(&fast, cidr, err, sizeof(err)), err);
			ASSERT_OK(rl_rule_add_src(&slow, cidr, err, sizeof(err)), err);
			for (int k = 0; k < 4; k++) {
				unsigned int keep = len6 > 32 * (unsigned)k ? len6 - 32 * k : 0;

				keep = keep > 32 ? 32 : keep;
				w[k] &= keep ? htonl(~0U << (32 - keep)) : 0;
			}
			inet_ntop(AF_INET6, w, a, sizeof(a));
			snprintf(cidr, sizeof(cidr), "%s/%u", a, len6);
			ASSERT_OK(rl_rule_add_src(&fast, cidr, err, sizeof(err)), err);
			ASSERT_OK(rl_rule_add_src(&slow, cidr, err, sizeof(err)), err);
		}
		if (!ASSERT_OK(rl_rule_prepare(&fast, err, sizeof(err)), err))
			goto next;
		for (int i = 0; i < 2000; i++) {
			struct rl_pkt_info p;

			memset(&p, 0, sizeof(p));
			if (i & 1) {
				p.src.addr[2] = htonl(0xffff);
				p.src.addr[3] =
					htonl(0x0a000000U | (__u32)rl_rand_below(&seed, 1U << 19));
			} else {
				p.src.addr[0] = htonl(0x20010db8);
				p.src.addr[1] = htonl((__u32)rl_rand_below(&seed, 1U << 20));
				p.src.addr[2] = (__u32)rl_rand(&seed) & (i & 2 ? 0 : ~0U);
				p.src.addr[3] = (__u32)rl_rand(&seed) & (i & 2 ? 0 : ~0U);
			}
			bad += rl_rule_match(&fast, &p) != rl_rule_match(&slow, &p);
		}
		ASSERT_EQ(bad, 0, "ranges and the prefixes one by one agree");
next:
		rl_rule_free(&fast);
		rl_rule_free(&slow);
	}
}

TEST(rules_first_match)
{
	struct rl_policy pol;
	struct rl_ruleset s;
	char err[RL_ERRLEN];
	struct rl_pkt_info p;

	rl_policy_defaults(&pol);
	pol.rate_num = 10;
	pol.rate_set = true;
	if (!ASSERT_OK(rl_ruleset_init(&s, &pol, NULL, err, sizeof(err)), err))
		return;
	ASSERT_OK(add_str(&s, "mon --src 198.18.1.0/24 --allow", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "bad --src 198.18.0.0/16 --deny", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "dns --proto udp --dport 53 --rate 5", err, sizeof(err)), err);
	p = pkt("198.18.1.1", "udp", 53, NULL);
	ASSERT_EQ(rl_ruleset_match(&s, &p), 0, "the first of three that match");
	p = pkt("198.18.2.1", "udp", 53, NULL);
	ASSERT_EQ(rl_ruleset_match(&s, &p), 1, "the second");
	p = pkt("198.19.2.1", "udp", 53, NULL);
	ASSERT_EQ(rl_ruleset_match(&s, &p), 2, "the third");
	p = pkt("198.19.2.1", "udp", 54, NULL);
	ASSERT_EQ(rl_ruleset_match(&s, &p), 3, "default matches the rest");
	/* Moved in front: now it decides. */
	ASSERT_OK(rl_ruleset_del(&s, "dns", err, sizeof(err)), err);
	ASSERT_OK(add_str(&s, "dns --proto udp --dport 53 --rate 5 --before mon", err, sizeof(err)),
		  err);
	p = pkt("198.18.1.1", "udp", 53, NULL);
	ASSERT_EQ(rl_ruleset_match(&s, &p), 0, "dns first now");
	rl_ruleset_free(&s);
}

/* ---------------------------------------------------------------------------
 * Block durations: the shared state machine, to the ns.
 */

TEST(rules_block_step_exact)
{
	static const char *const w[] = { "--rate", "1", "--burst", "1", NULL };
	const __u64 dur = 10 * NSEC + 7, t1 = 5 * NSEC + 3;
	struct rl_block_state s, kept;
	struct rl_policy pol;
	struct rl_params p;
	char err[RL_ERRLEN];

	if (!ASSERT_OK(rl_policy_parse(&pol, NULL, w, err, sizeof(err)), err) ||
	    !ASSERT_OK(rl_params_init(&p, &pol, err, sizeof(err)), err))
		return;
	s = (struct rl_block_state){ rl_initial_state(&p, 0), 0 };
	ASSERT_EQ(rl_block_step(&p, dur, &s, 0, 1), RL_BLOCK_PASS, "burst of 1");
	ASSERT_EQ(rl_block_step(&p, dur, &s, t1, 1), RL_BLOCK_PASS, "refilled after 1 s");
	ASSERT_EQ(rl_block_step(&p, dur, &s, t1 + 1, 1), RL_BLOCK_LIMITED, "over: limited");
	ASSERT_EQ(s.until, t1 + 1 + dur, "blocked until t + DUR");
	kept = s;
	/* Well past the refill, but blocked: dropped, state not stepped. */
	ASSERT_EQ(rl_block_step(&p, dur, &s, t1 + 2 * NSEC, 1), RL_BLOCK_BLOCKED, "blocked");
	ASSERT_EQ(rl_block_step(&p, dur, &s, s.until - 1, 1), RL_BLOCK_BLOCKED, "until - 1");
	ASSERT_TRUE(!memcmp(&s, &kept, sizeof(s)), "nothing changes while blocked");
	/* At until exactly: a new source (a full bucket), stepped. */
	ASSERT_EQ(rl_block_step(&p, dur, &s, kept.until, 1), RL_BLOCK_PASS, "until: afresh");
	ASSERT_EQ(s.until, 0, "unblocked");
	ASSERT_EQ(s.state, rl_vt(&p, kept.until) + p.unit_cost,
		  "the state of a new source after one packet");
	ASSERT_EQ(rl_block_step(&p, dur, &s, kept.until + 1, 1), RL_BLOCK_LIMITED, "and again");
	ASSERT_EQ(s.until, kept.until + 1 + dur, "a new block");

	/* No duration: rl_step() alone, never blocked. */
	s = (struct rl_block_state){ rl_initial_state(&p, 0), 0 };
	ASSERT_EQ(rl_block_step(&p, 0, &s, 0, 1), RL_BLOCK_PASS, "pass");
	ASSERT_EQ(rl_block_step(&p, 0, &s, 1, 1), RL_BLOCK_LIMITED, "limited");
	ASSERT_EQ(s.until, 0, "not blocked");
	ASSERT_EQ(rl_block_step(&p, 0, &s, NSEC, 1), RL_BLOCK_PASS, "refilled, as rl_step()");

	/* At the top of the clock until saturates instead of wrapping into the past. */
	s = (struct rl_block_state){ rl_initial_state(&p, ~0ULL - 5), 0 };
	ASSERT_EQ(rl_block_step(&p, dur, &s, ~0ULL - 5, 1), RL_BLOCK_PASS, "pass");
	ASSERT_EQ(rl_block_step(&p, dur, &s, ~0ULL - 4, 1), RL_BLOCK_LIMITED, "limited");
	ASSERT_EQ(s.until, ~0ULL, "saturated");
	ASSERT_EQ(rl_block_step(&p, dur, &s, ~0ULL - 1, 1), RL_BLOCK_BLOCKED, "still blocked");
}

/* ---------------------------------------------------------------------------
 * The rules simulator.
 */

static bool make_set(struct rl_ruleset *s, const char *default_policy, const char *const *rules)
{
	char err[RL_ERRLEN], *copy = strdup(default_policy), *save = NULL, *w[16];
	struct rl_policy pol;
	size_t n = 0;
	bool ok;

	for (char *t = strtok_r(copy, " ", &save); t && n < 15; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	w[n] = NULL;
	ok = ASSERT_OK(rl_policy_parse(&pol, NULL, (const char *const *)w, err, sizeof(err)),
		       err) &&
	     ASSERT_OK(rl_ruleset_init(s, &pol, NULL, err, sizeof(err)), err);
	free(copy);
	if (!ok)
		return false;
	for (; *rules; rules++) {
		if (!ASSERT_OK(add_str(s, *rules, err, sizeof(err)), err)) {
			rl_ruleset_free(s);
			return false;
		}
	}
	return true;
}

TEST(rules_sim_actions)
{
	static const char *const rules[] = {
		"ok --src 198.18.1.0/24 --allow",
		"no --src 198.18.2.0/24 --deny",
		"try --src 198.18.3.0/24 --deny --action dry-run",
		"dns --proto udp --dport 53 --rate 1 --burst 2 --prefix4 24",
		"dry --proto udp --dport 54 --rate 1 --burst 1 --action dry-run",
		NULL,
	};
	struct rl_ruleset s;
	struct rl_rsim sim;
	struct rl_rsim_result res;
	struct rl_pkt_info p;

	if (!make_set(&s, "--rate 1 --burst 1", rules))
		return;
	if (!ASSERT_OK(rl_rsim_init(&sim, &s), "init")) {
		rl_ruleset_free(&s);
		return;
	}
	/* allow: every packet passes, whatever the rate */
	for (int i = 0; i < 5; i++) {
		p = pkt("198.18.1.1", "udp", 53, NULL);
		ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 100, &res), 1, "allowed");
		ASSERT_EQ(res.rule, 0, "by ok");
		ASSERT_EQ(res.reason, RL_REASON_ALLOWED, "allowed");
	}
	/* deny: every packet dropped; dry-run deny passes them, counted would-drop */
	p = pkt("198.18.2.1", NULL, -1, NULL);
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 0, "denied");
	ASSERT_EQ(res.reason, RL_REASON_DENIED, "denied");
	p = pkt("198.18.3.1", NULL, -1, NULL);
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 1, "dry-run passes");
	ASSERT_TRUE(res.dry_run, "would drop");
	/* limit, per /24 of that rule: two sources of one /24 share the burst of 2 */
	p = pkt("198.18.4.1", "udp", 53, NULL);
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 1, "1st");
	ASSERT_EQ(res.reason, RL_REASON_PASSED, "passed");
	p = pkt("198.18.4.2", "udp", 53, NULL);
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 1, "2nd, same /24");
	ASSERT_EQ(res.key.addr[3], htonl(0xc6120400), "keyed by the rule's /24");
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 0, "3rd: over");
	ASSERT_EQ(res.reason, RL_REASON_LIMITED, "limited");
	/* the same source under another rule has its own state */
	p = pkt("198.18.4.2", "udp", 99, NULL);
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 1, "default: its own bucket");
	ASSERT_EQ(res.rule, 5, "default");
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 0, "default's burst of 1");
	/* dry-run limit */
	p = pkt("198.18.4.2", "udp", 54, NULL);
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 1, "dry 1st");
	ASSERT_EQ(rl_rsim_packet(&sim, &p, 0, 60, &res), 1, "dry 2nd passes");
	ASSERT_TRUE(res.dry_run && res.reason == RL_REASON_LIMITED, "would drop, limited");

	ASSERT_EQ(sim.cnt[0].allowed, 5, "ok allowed");
	ASSERT_EQ(sim.cnt[0].passed, 5, "ok passed");
	ASSERT_EQ(sim.cnt[0].passed_bytes, 500, "ok bytes");
	ASSERT_EQ(sim.cnt[1].denied, 1, "no denied");
	ASSERT_EQ(sim.cnt[1].dropped, 1, "no dropped");
	ASSERT_EQ(sim.cnt[2].denied, 1, "try denied");
	ASSERT_EQ(sim.cnt[2].would_drop, 1, "try would drop");
	ASSERT_EQ(sim.cnt[2].passed, 1, "try passed");
	ASSERT_EQ(sim.cnt[2].dropped, 0, "try dropped nothing");
	ASSERT_EQ(sim.cnt[3].passed, 2, "dns passed");
	ASSERT_EQ(sim.cnt[3].limited, 1, "dns limited");
	ASSERT_EQ(sim.cnt[3].dropped, 1, "dns dropped");
	ASSERT_EQ(sim.tabs[3].count, 1, "dns: one /24");
	ASSERT_EQ(sim.cnt[4].would_drop, 1, "dry would drop");
	ASSERT_EQ(sim.cnt[4].limited, 1, "dry limited");
	ASSERT_EQ(sim.cnt[4].passed, 2, "dry passed");
	ASSERT_EQ(sim.cnt[5].passed + sim.cnt[5].dropped, 2, "default");
	rl_rsim_free(&sim);
	rl_ruleset_free(&s);
}

TEST(rules_sim_block)
{
	static const char *const rules[] = {
		"syn --proto tcp --tcp-flags syn --rate 1 --burst 1 --block 3s",
		NULL,
	};
	const __u64 t0 = 2 * NSEC;
	struct rl_ruleset s;
	struct rl_rsim sim;
	struct rl_rsim_result res;
	struct rl_pkt_info syn = pkt("198.18.0.1", "tcp", 443, "S");
	struct rl_pkt_info ack = pkt("198.18.0.1", "tcp", 443, "A");

	if (!make_set(&s, "--rate 1000", rules))
		return;
	if (!ASSERT_OK(rl_rsim_init(&sim, &s), "init")) {
		rl_ruleset_free(&s);
		return;
	}
	ASSERT_EQ(rl_rsim_packet(&sim, &syn, t0, 60, &res), 1, "first SYN");
	ASSERT_EQ(rl_rsim_packet(&sim, &syn, t0 + 1, 60, &res), 0, "second: over");
	ASSERT_EQ(res.reason, RL_REASON_LIMITED, "limited, and blocked from now");
	ASSERT_EQ(res.src->until, t0 + 1 + 3 * NSEC, "until");
	/* An ACK of the same source goes to default: a block is per rule. */
	ASSERT_EQ(rl_rsim_packet(&sim, &ack, t0 + 2, 60, &res), 1, "ACK untouched");
	ASSERT_EQ(res.rule, 1, "default");
	ASSERT_EQ(rl_rsim_packet(&sim, &syn, t0 + 2 * NSEC, 60, &res), 0, "refilled but blocked");
	ASSERT_EQ(res.reason, RL_REASON_BLOCKED, "blocked");
	ASSERT_EQ(rl_rsim_packet(&sim, &syn, t0 + 1 + 3 * NSEC - 1, 60, &res), 0, "until - 1");
	ASSERT_EQ(res.reason, RL_REASON_BLOCKED, "blocked to the last ns");
	ASSERT_EQ(rl_rsim_packet(&sim, &syn, t0 + 1 + 3 * NSEC, 60, &res), 1, "until: afresh");
	ASSERT_EQ(res.reason, RL_REASON_PASSED, "passed");
	ASSERT_EQ(rl_rsim_packet(&sim, &syn, t0 + 2 + 3 * NSEC, 60, &res), 0, "a fresh burst of 1");
	ASSERT_EQ(sim.cnt[0].passed, 2, "passed");
	ASSERT_EQ(sim.cnt[0].limited, 2, "limited");
	ASSERT_EQ(sim.cnt[0].blocked, 2, "blocked");
	ASSERT_EQ(sim.cnt[0].dropped, 4, "dropped = limited + blocked");
	rl_rsim_free(&sim);
	rl_ruleset_free(&s);
}

/* ---------------------------------------------------------------------------
 * simulate --rules, as a user runs it.
 */

static int run_sim(const char *args, const char *rules, const char *trace, char **out, char **err)
{
	char rpath[64], tpath[64], *cmd;
	int ret = -1;

	*out = *err = NULL;
	if (!tmp_file(rules, rpath, sizeof(rpath)))
		return -1;
	if (!tmp_file(trace, tpath, sizeof(tpath))) {
		unlink(rpath);
		return -1;
	}
	if (asprintf(&cmd, "%s/xdp-ratelimit simulate %s --rules %s --trace %s", rl_build_dir, args,
		     rpath, tpath) >= 0) {
		ret = rl_run(cmd, out, err);
		free(cmd);
	}
	unlink(rpath);
	unlink(tpath);
	return ret;
}

static const char cli_rules[] =
	"# operators first\n"
	"mon --src 198.18.1.0/24,2001:db8:1::/48 --allow\n"
	"\n"
	"flood --src 198.18.2.0/24 --deny   # known bad\n"
	"syn --proto tcp --dport 443 --tcp-flags syn --rate 1 --burst 1 --block 2s\n"
	"dns --proto udp --dport 53-54 --rate 2 --burst 2 --prefix4 24\n";

static const char cli_trace[] = "0 198.18.1.5 60 tcp/443 S\n"
				"0 ::ffff:198.18.1.6\n"
				"0 2001:db8:1::9 80 udp/53\n"
				"0 198.18.2.5\n"
				"0 198.18.3.1 60 tcp/443 S\n"
				"0.1 198.18.3.1 60 tcp/443 S\n"
				"0.2 198.18.3.1 60 tcp/443 SA\n"
				"0.3 198.18.3.1 60 tcp\n"
				"2.099999999 198.18.3.1 60 tcp/443 S\n"
				"2.1 198.18.3.1 60 tcp/443 S\n"
				"3 198.18.4.1 60 udp/52\n"
				"3 198.18.4.1 60 udp/53\n"
				"3 198.18.4.2 60 udp/54\n"
				"3 198.18.4.3 60 udp/55\n"
				"3 198.18.4.3 60 udp/54\n"
				"3 198.18.4.3 60 udp\n"
				"3 198.18.4.3\n";

TEST(rules_simulate_cli)
{
	char *out, *err;

	ASSERT_EQ(run_sim("--rate 100 --summary", cli_rules, cli_trace, &out, &err), 0, "exit");
	ASSERT_STREQ(out,
		     "0 198.18.1.5 allow mon\n"
		     "0 198.18.1.6 allow mon\n"
		     "0 2001:db8:1::9 allow mon\n"
		     "0 198.18.2.5 drop flood\n"
		     "0 198.18.3.1 allow syn\n"
		     "0.1 198.18.3.1 drop syn\n"
		     "0.2 198.18.3.1 allow default\n"
		     "0.3 198.18.3.1 allow default\n"
		     "2.099999999 198.18.3.1 drop syn\n"
		     "2.1 198.18.3.1 allow syn\n"
		     "3 198.18.4.1 allow default\n"
		     "3 198.18.4.0/24 allow dns\n"
		     "3 198.18.4.0/24 allow dns\n"
		     "3 198.18.4.3 allow default\n"
		     "3 198.18.4.0/24 drop dns\n"
		     "3 198.18.4.3 allow default\n"
		     "3 198.18.4.3 allow default\n"
		     "\n"
		     "RULE                                PASSED    DROPPED    ALLOWED     DENIED "
		     "   LIMITED    BLOCKED WOULD_DROP    SOURCES\n"
		     "mon                                      3          0          3          0 "
		     "         0          0          0          0\n"
		     "flood                                    0          1          0          1 "
		     "         0          0          0          0\n"
		     "syn                                      2          2          0          0 "
		     "         1          1          0          1\n"
		     "dns                                      2          1          0          0 "
		     "         1          0          0          1\n"
		     "default                                  6          0          0          0 "
		     "         0          0          0          3\n"
		     "total                                   13          4\n",
		     "verdicts, deciding rules, per-rule totals");
	ASSERT_STREQ(err, "", "stderr");
	free(out);
	free(err);

	/* JSON: the rule and reason per packet, per-rule totals. */
	ASSERT_EQ(run_sim("--rate 100 --json --quiet", cli_rules, cli_trace, &out, &err), 0,
		  "json");
	ASSERT_CONTAINS(out,
			"\"rules\":[{\"name\":\"mon\",\"passed\":3,\"dropped\":0,\"allowed\":3,"
			"\"denied\":0,\"limited\":0,\"blocked\":0,\"would_drop\":0,\"sources\":0}",
			"per-rule totals");
	ASSERT_CONTAINS(out,
			"{\"name\":\"syn\",\"passed\":2,\"dropped\":2,\"allowed\":0,\"denied\":0,"
			"\"limited\":1,\"blocked\":1,\"would_drop\":0,\"sources\":1}",
			"syn totals");
	free(out);
	free(err);
	ASSERT_EQ(run_sim("--rate 100 --json", cli_rules,
			  "0 198.18.2.5\n0.5 198.18.3.1 60 tcp/443 S\n", &out, &err),
		  0, "json");
	ASSERT_CONTAINS(
		out,
		"\"packets\":[{\"time\":\"0\",\"source\":\"198.18.2.5\",\"verdict\":\"drop\","
		"\"rule\":\"flood\",\"reason\":\"denied\"},{\"time\":\"0.5\",\"source\":"
		"\"198.18.3.1\",\"verdict\":\"allow\",\"rule\":\"syn\",\"reason\":\"passed\"}]",
		"rule and reason per packet");
	free(out);
	free(err);
}

/*
 * The issue's reproduction: an allow rule whose --src-file is empty, 30
 * packets of one source in 30 ms against --rate 10 --burst 5: the rule
 * allows none of them (it used to allow all 30), the default policy passes
 * the burst, and simulate warns that the list is empty.
 */
TEST(rules_simulate_empty_src_file)
{
	char epath[64], rules[128], trace[30 * 24], *out, *err;
	size_t o = 0;

	if (!tmp_file(NULL, epath, sizeof(epath)))
		return;
	snprintf(rules, sizeof(rules), "e --allow --src-file %s\n", epath);
	for (int i = 0; i < 30; i++)
		o += (size_t)snprintf(trace + o, sizeof(trace) - o, "0.%03d 198.18.0.7\n", i);
	if (ASSERT_EQ(run_sim("--rate 10 --burst 5 --json --quiet", rules, trace, &out, &err), 0,
		      "exit")) {
		ASSERT_CONTAINS(out,
				"\"rules\":[{\"name\":\"e\",\"passed\":0,\"dropped\":0,"
				"\"allowed\":0,",
				"the empty allow list allows nothing");
		ASSERT_CONTAINS(out, "{\"name\":\"default\",\"passed\":5,\"dropped\":25,",
				"the default policy decides: 5 of 30");
		ASSERT_CONTAINS(err, "rule 'e': its source list is empty", "a warning");
	}
	free(out);
	free(err);
	unlink(epath);
}

TEST(rules_simulate_cli_errors)
{
	static const struct {
		const char *rules;
		const char *why[2];
	} cases[] = {
		{ "a --allow\n\n# c\nb --src 198.18.0.1/24 --deny\n",
		  { ":4: --src: '198.18.0.1/24' has host bits set" } },
		{ "a --allow\na --deny\n", { ":2: a rule named 'a' exists" } },
		{ "a --allow --before b\n", { ":1: --before has no meaning here" } },
		{ "a --proto tcp --dport 99999 --deny\n", { ":1: --dport" } },
		{ "a --dport 53 --deny\n", { ":1: --dport needs --proto tcp or --proto udp" } },
		{ "a --allow --deny\n", { ":1:", "two actions" } },
		{ "default --allow\n", { ":1:", "'default' is the last rule" } },
		{ "a --src 10.0.0.0/8\n", { ":1: no action" } },
	};
	char *out, *err;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_EQ(run_sim("--rate 1", cases[i].rules, "0 10.0.0.1\n", &out, &err), 2,
			  cases[i].rules);
		for (int k = 0; k < 2 && cases[i].why[k]; k++)
			ASSERT_CONTAINS(err, cases[i].why[k], cases[i].rules);
		ASSERT_CONTAINS(err, "/tmp/rl-test-rules-", "names the file");
		ASSERT_STREQ(out, "", "nothing on stdout");
		free(out);
		free(err);
	}
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd),
			 "%s/xdp-ratelimit simulate --rate 1 --rules /nonexistent/rl-rules "
			 "</dev/null",
			 rl_build_dir);
		ASSERT_EQ(rl_run(cmd, &out, &err), 2, "missing rules file");
	}
	ASSERT_CONTAINS(err, "/nonexistent/rl-rules", "names it");
	free(out);
	free(err);
}

/* Without --rules, the new trace fields change nothing in the output. */
TEST(rules_simulate_plain_unchanged)
{
	char cmd[512], path[64], path2[64], *a, *b;
	const char *plain = "0 198.18.0.1\n0 198.18.0.1 60\n0.5 198.18.0.2 1500\n";
	const char *l4 = "0 198.18.0.1 64 tcp/443 S\n0 198.18.0.1 60 udp\n0.5 198.18.0.2 1500 44\n";

	if (!tmp_file(plain, path, sizeof(path)) || !tmp_file(l4, path2, sizeof(path2)))
		return;
	snprintf(cmd, sizeof(cmd), "%s/xdp-ratelimit simulate --rate 1 --burst 1 --trace %s",
		 rl_build_dir, path);
	ASSERT_EQ(rl_run(cmd, &a, NULL), 0, "plain");
	snprintf(cmd, sizeof(cmd), "%s/xdp-ratelimit simulate --rate 1 --burst 1 --trace %s",
		 rl_build_dir, path2);
	ASSERT_EQ(rl_run(cmd, &b, NULL), 0, "with L4 fields");
	ASSERT_STREQ(a, "0 198.18.0.1 allow\n0 198.18.0.1 drop\n0.5 198.18.0.2 allow\n", "plain");
	ASSERT_STREQ(b, a, "the same");
	free(a);
	free(b);
	unlink(path);
	unlink(path2);
}

/*
 * A source file that is not a regular file, or too large, is refused at
 * once and named for what it is: a FIFO blocked forever, /dev/zero grew the
 * memory to gigabytes.
 */
TEST(rules_src_file_not_regular)
{
	static const struct {
		const char *path, *why;
	} cases[] = {
		{ NULL, "is a FIFO, not a regular file" }, /* one without a writer */
		{ "/dev/zero", "is a character device, not a regular file" },
		{ "/tmp", "is a directory, not a regular file" },
		{ "", "is larger than 64 MiB" }, /* a sparse file of 64 MiB and a byte */
	};
	char fifo[64], big[64], words[160], err[RL_ERRLEN];
	struct rl_rule r;
	int fd;

	snprintf(fifo, sizeof(fifo), "/tmp/rl-test-rules-fifo-%d", getpid());
	if (!ASSERT_OK(mkfifo(fifo, 0600), "mkfifo"))
		return;
	if (!tmp_file(NULL, big, sizeof(big)))
		goto out_fifo;
	fd = open(big, O_WRONLY);
	if (!ASSERT_TRUE(fd >= 0 && !ftruncate(fd, (64 << 20) + 1), "a sparse file")) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *p = !cases[i].path ? fifo : *cases[i].path ? cases[i].path : big;
		double t0 = now_s(), dt;

		snprintf(words, sizeof(words), "r --src-file %s --deny", p);
		ASSERT_EQ(parse_str(&r, NULL, words, err, sizeof(err)), -EINVAL, words);
		dt = now_s() - t0;
		ASSERT_CONTAINS(err, p, "names the file");
		ASSERT_CONTAINS(err, cases[i].why, words);
		ASSERT_TRUE(dt < 2, "at once, not a hang");
	}
out:
	unlink(big);
out_fifo:
	unlink(fifo);
}

/*
 * A bad line is not printed back: a message shows at most its first word,
 * and only when it is made of a CIDR's characters (a line of a password
 * file given as a source file is not shown).
 */
TEST(rules_src_file_no_secret_quoted)
{
	static const struct {
		const char *line, *why, *secret;
	} cases[] = {
		{ "root:$6$saltsalt$SECRETHASHSECRETHASH:19000:0:99999:7:::",
		  "not an IPv4 or IPv6 CIDR (a word of 56 characters with some no CIDR has; not "
		  "shown)",
		  "SECRETHASH" },
		{ "198.18.0.0/24 my-password-is-hunter2 trailing",
		  "one CIDR per line ('198.18.0.0/24', then more words)", "hunter2" },
		{ "password=hunter2,198.18.0.0/24", "one CIDR per line (a word of", "hunter2" },
		{ "DB_PASSWORD=\x1b[2Jhunter2", "not an IPv4 or IPv6 CIDR", "hunter2" },
		/* A CIDR-like word longer than a CIDR: cut. */
		{ "1111111111111111111111111111111111111111111111111111111111111111",
		  "('1111111111111111111111111111111111111111111111111...')", NULL },
	};
	char path[64], words[128], err[RL_ERRLEN], text[256];
	struct rl_rule r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text), "198.18.1.0/24\n%s\n", cases[i].line);
		if (!tmp_file(text, path, sizeof(path)))
			return;
		snprintf(words, sizeof(words), "r --src-file %s --deny", path);
		ASSERT_EQ(parse_str(&r, NULL, words, err, sizeof(err)), -EINVAL, cases[i].line);
		unlink(path);
		ASSERT_CONTAINS(err, ":2: ", "names FILE:LINE");
		ASSERT_CONTAINS(err, cases[i].why, cases[i].line);
		if (cases[i].secret)
			ASSERT_TRUE(!strstr(err, cases[i].secret),
				    "the rest of the line not shown");
		ASSERT_TRUE(!strchr(err, '\x1b'), "no control byte");
	}
}

/* simulate --rules: a FIFO is refused at once, not waited on. */
TEST(rules_simulate_rules_fifo)
{
	char fifo[64], cmd[256], *out = NULL, *err = NULL;

	snprintf(fifo, sizeof(fifo), "/tmp/rl-test-rules-fifo-%d", getpid());
	if (!ASSERT_OK(mkfifo(fifo, 0600), "mkfifo"))
		return;
	snprintf(cmd, sizeof(cmd),
		 "timeout 10 %s/xdp-ratelimit simulate --rate 1 --rules %s </dev/null",
		 rl_build_dir, fifo);
	ASSERT_EQ(rl_run(cmd, &out, &err), 2, "simulate --rules FIFO");
	ASSERT_CONTAINS(err, "is a FIFO, not a regular file", "says what it is");
	free(out);
	free(err);
	unlink(fifo);
}
