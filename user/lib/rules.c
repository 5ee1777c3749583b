// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The rule model (rules.h): parsing through the option table, validation,
 * printing back as "rule add" words and as JSON, matching, the rule set.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_writer.h"
#include "log.h"
#include "opts.h"
#include "rules.h"
#include "source.h"
#include "textfile.h"

typedef unsigned __int128 u128;

void rl_rule_init(struct rl_rule *r)
{
	memset(r, 0, sizeof(*r));
	rl_policy_defaults(&r->pol);
	rl_opts_defaults(&r->o);
}

void rl_rule_free(struct rl_rule *r)
{
	free(r->src4);
	free(r->src6);
	free(r->r4);
	free(r->r6);
	rl_rule_init(r);
}

bool rl_rule_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= RL_RULE_NAME_LEN || name[0] == '-')
		return false;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
	       n;
}

/* ---- protocols and TCP flags ---- */

static const struct {
	const char *name;
	__u8 proto;
} protos[] = {
	{ "tcp", RL_PROTO_TCP },
	{ "udp", RL_PROTO_UDP },
	{ "icmp", RL_PROTO_ICMP },
	{ "icmpv6", RL_PROTO_ICMPV6 },
};

int rl_parse_proto(const char *s, __u8 *proto)
{
	char err[RL_ERRLEN];
	__u64 v;

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (!strcmp(s, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	}
	if (rl_parse_u64(s, 0, 255, &v, err, sizeof(err)))
		return -EINVAL;
	*proto = (__u8)v;
	return 0;
}

const char *rl_proto_name(__u8 proto, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	snprintf(buf, len, "%u", proto);
	return buf;
}

/* tcpdump's letters, bit i of the flags byte is letter i. */
static const char flag_letters[] = "FSRPAUEW";

int rl_parse_tcp_flag_letters(const char *s, __u8 *flags)
{
	__u8 f = 0;

	if (!strcmp(s, ".")) {
		*flags = 0;
		return 0;
	}
	for (; *s; s++) {
		const char *l = strchr(flag_letters, *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);

		if (!*s || !l)
			return -EINVAL;
		f |= (__u8)(1U << (l - flag_letters));
	}
	*flags = f;
	return 0;
}

char *rl_tcp_flags_str(__u8 flags, char *buf)
{
	int n = 0;

	for (int i = 0; i < 8; i++)
		if (flags & (1U << i))
			buf[n++] = flag_letters[i];
	if (!n)
		buf[n++] = '.';
	buf[n] = '\0';
	return buf;
}

/* ---- source prefixes ---- */

static __u32 mask32(unsigned int len)
{
	return len ? ~0U << (32 - len) : 0;
}

static u128 mask128(unsigned int len)
{
	return len ? ~(u128)0 << (128 - len) : 0;
}

static u128 addr6_u128(const __u32 *a)
{
	u128 v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 32 | ntohl(a[i]);
	return v;
}

static void u128_addr6(u128 v, __u32 *a)
{
	for (int i = 3; i >= 0; i--, v >>= 32)
		a[i] = htonl((__u32)v);
}

/* Make room for one more element of @size in *@p. */
static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *q;

	if (n < *cap)
		return 0;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

int rl_rule_add_src(struct rl_rule *r, const char *cidr, char *err, size_t errlen)
{
	char addr[64], net[INET6_ADDRSTRLEN];
	const char *slash = strchr(cidr, '/');
	size_t n = slash ? (size_t)(slash - cidr) : strlen(cidr);
	unsigned int len, max;
	__u32 a[4];
	bool v4;

	r->src_given = true;
	if (!strcmp(cidr, RL_SRC_NONE))
		return 0;
	if (n >= sizeof(addr))
		goto bad;
	memcpy(addr, cidr, n);
	addr[n] = '\0';
	if (inet_pton(AF_INET, addr, &a[0]) == 1)
		v4 = true;
	else if (inet_pton(AF_INET6, addr, a) == 1)
		v4 = false;
	else
		goto bad;
	max = v4 ? 32 : 128;
	len = max;
	if (slash) {
		const char *d = slash + 1;
		size_t nd = strspn(d, "0123456789");

		if (!nd || nd > 3 || d[nd] || (len = (unsigned int)atoi(d)) > max) {
			snprintf(err, errlen, "'%s': prefix length '%s' is not 0-%u", cidr, d, max);
			return -EINVAL;
		}
	}
	/* ::ffff:a.b.c.d/96+N is IPv4 a.b.c.d/N: what an IPv4-mapped source matches. */
	if (!v4 && len >= 96 && !a[0] && !a[1] && a[2] == htonl(0xffff)) {
		v4 = true;
		a[0] = a[3];
		len -= 96;
	}
	if (v4) {
		__u32 h = ntohl(a[0]);

		if (h & ~mask32(len)) {
			struct in_addr in = { htonl(h & mask32(len)) };

			inet_ntop(AF_INET, &in, net, sizeof(net));
			goto host_bits;
		}
		if (grow((void **)&r->src4, &r->cap4, r->n4, sizeof(*r->src4)))
			goto nomem;
		r->src4[r->n4++] = (struct rl_prefix4){ a[0], len };
	} else {
		u128 v = addr6_u128(a);

		if (v & ~mask128(len)) {
			u128_addr6(v & mask128(len), a);
			inet_ntop(AF_INET6, a, net, sizeof(net));
			goto host_bits;
		}
		if (grow((void **)&r->src6, &r->cap6, r->n6, sizeof(*r->src6)))
			goto nomem;
		memcpy(r->src6[r->n6].addr, a, sizeof(a));
		r->src6[r->n6++].len = len;
	}
	/* New prefixes: the ranges must be built again. */
	free(r->r4);
	free(r->r6);
	r->r4 = NULL;
	r->r6 = NULL;
	r->nr4 = r->nr6 = 0;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
host_bits:
	snprintf(err, errlen, "'%s' has host bits set (the prefix would be %s/%u)", cidr, net, len);
	return -EINVAL;
bad:
	snprintf(err, errlen,
		 "'%s' is not an IPv4 or IPv6 CIDR (e.g. 198.18.0.0/15, 2001:db8::/32)", cidr);
	return -EINVAL;
}

/*
 * A source file's size: RL_SRC_FILE_MAX_LINES lines of the longest CIDR (49
 * characters, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255/128") and a
 * newline fit. It is read as it is counted: a file that grows, or one that
 * is not a regular file (/dev/zero, a FIFO), never fills the memory.
 */
#define SRC_FILE_MAX (64 << 20)
/* The longest word a message quotes: a CIDR's length. */
#define SRC_QUOTE_MAX 49

/*
 * How a word of a source file is shown in a message: quoted when it is made
 * of what a CIDR (or a comma list of them) is made of, and then cut at
 * SRC_QUOTE_MAX; otherwise not at all: the file may be one that should not
 * be shown (a line of a password file is not a CIDR, and not printed back).
 */
static const char *src_word(const char *s, size_t n, char *buf, size_t len)
{
	if (!n || strspn(s, "0123456789abcdefABCDEF.:/,") < n) {
		snprintf(buf, len, "a word of %zu characters with some no CIDR has; not shown", n);
		return buf;
	}
	snprintf(buf, len, "'%.*s%s'", (int)(n < SRC_QUOTE_MAX ? n : SRC_QUOTE_MAX), s,
		 n > SRC_QUOTE_MAX ? "..." : "");
	return buf;
}

int rl_rule_add_src_file(struct rl_rule *r, const char *path, char *err, size_t errlen)
{
	char *line = NULL, msg[RL_ERRLEN], word[96];
	size_t cap = 0, lineno = 0, bytes = 0;
	ssize_t n;
	FILE *f;
	int ret = 0;

	/* A regular file only: a FIFO would block here, /dev/zero never end. */
	f = rl_textfile_fopen(path, SRC_FILE_MAX, &ret, err, errlen);
	if (!f)
		return ret == -ENOMEM ? ret : -EINVAL;
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *s = line, *e;

		bytes += (size_t)n;
		if (bytes > SRC_FILE_MAX) {
			snprintf(err, errlen, "%s: larger than %s (it grew while read)", path,
				 rl_textfile_size_str(SRC_FILE_MAX, word, sizeof(word)));
			ret = -EINVAL;
			goto out;
		}
		if (++lineno > RL_SRC_FILE_MAX_LINES) {
			snprintf(err, errlen, "%s: more than %d lines", path,
				 RL_SRC_FILE_MAX_LINES);
			ret = -EINVAL;
			goto out;
		}
		if (memchr(line, '\0', (size_t)n)) {
			snprintf(err, errlen, "%s:%zu: holds a NUL byte: not a text file", path,
				 lineno);
			ret = -EINVAL;
			goto out;
		}
		s[strcspn(s, "#")] = '\0';
		s += strspn(s, " \t\r\n");
		if (!*s)
			continue;
		/* Trailing blanks and the newline off. */
		for (e = s + strlen(s); strchr(" \t\r\n", e[-1]); e--)
			;
		*e = '\0';
		e = s + strcspn(s, " \t");
		/* Two words, or a comma list as --src takes: one CIDR a line. Only the first is shown. */
		if (*e || memchr(s, ',', (size_t)(e - s))) {
			snprintf(err, errlen, "%s:%zu: one CIDR per line (%s%s)", path, lineno,
				 src_word(s, (size_t)(e - s), word, sizeof(word)),
				 *e ? ", then more words" : "");
			ret = -EINVAL;
			goto out;
		}
		/* rl_rule_add_src()'s messages quote the word: only one a message may show. */
		if (strcmp(s, RL_SRC_NONE) &&
		    (strspn(s, "0123456789abcdefABCDEF.:/") < (size_t)(e - s) ||
		     e - s > SRC_QUOTE_MAX)) {
			snprintf(err, errlen, "%s:%zu: not an IPv4 or IPv6 CIDR (%s)", path, lineno,
				 src_word(s, (size_t)(e - s), word, sizeof(word)));
			ret = -EINVAL;
			goto out;
		}
		ret = rl_rule_add_src(r, s, msg, sizeof(msg));
		if (ret) {
			snprintf(err, errlen, "%s:%zu: %s", path, lineno,
				 ret == -ENOMEM ? "out of memory" : msg);
			goto out;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "reading '%s': %s", path, strerror(errno));
		ret = -EINVAL;
	}
out:
	free(line);
	fclose(f);
	return ret;
}

static int cmp4(const void *a, const void *b)
{
	const struct rl_prefix4 *x = a, *y = b;
	__u32 ax = ntohl(x->addr), ay = ntohl(y->addr);

	if (ax != ay)
		return ax < ay ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int cmp6(const void *a, const void *b)
{
	const struct rl_prefix6 *x = a, *y = b;
	u128 ax = addr6_u128(x->addr), ay = addr6_u128(y->addr);

	if (ax != ay)
		return ax < ay ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

/*
 * The prefixes of each family, sorted by start, merged into disjoint ranges
 * (overlapping or adjacent ones become one): a source is in the set iff it
 * lies in the last range starting at or below it. One binary search per
 * packet, however many prefixes.
 */
static int build_ranges(struct rl_rule *r)
{
	size_t n = 0;

	free(r->r4);
	free(r->r6);
	r->r4 = NULL;
	r->r6 = NULL;
	r->nr4 = r->nr6 = 0;
	if (r->n4) {
		r->r4 = malloc(r->n4 * sizeof(*r->r4));
		if (!r->r4)
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->n4; i++) {
		__u32 lo = ntohl(r->src4[i].addr), hi = lo | ~mask32(r->src4[i].len);

		if (n && (lo <= r->r4[n - 1].hi || lo - 1 == r->r4[n - 1].hi)) {
			if (hi > r->r4[n - 1].hi)
				r->r4[n - 1].hi = hi;
			continue;
		}
		r->r4[n++] = (struct rl_range4){ lo, hi };
	}
	r->nr4 = n;
	n = 0;
	if (r->n6) {
		r->r6 = malloc(r->n6 * sizeof(*r->r6));
		if (!r->r6)
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->n6; i++) {
		u128 lo = addr6_u128(r->src6[i].addr), hi = lo | ~mask128(r->src6[i].len);

		if (n && (lo <= r->r6[n - 1].hi || lo - 1 == r->r6[n - 1].hi)) {
			if (hi > r->r6[n - 1].hi)
				r->r6[n - 1].hi = hi;
			continue;
		}
		r->r6[n++] = (struct rl_range6){ lo, hi };
	}
	r->nr6 = n;
	return 0;
}

int rl_rule_prepare(struct rl_rule *r, char *err, size_t errlen)
{
	size_t n;
	int ret;

	if (!rl_rule_name_ok(r->name)) {
		snprintf(err, errlen,
			 "rule name '%s' is not 1-%d characters of letters, digits, '_', '.' and "
			 "'-' (not starting with '-')",
			 r->name, RL_RULE_NAME_LEN - 1);
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_DPORT) &&
	    (!(r->l4.fields & RL_MATCH_PROTO) ||
	     (r->l4.proto != RL_PROTO_TCP && r->l4.proto != RL_PROTO_UDP))) {
		snprintf(err, errlen,
			 "--dport needs --proto tcp or --proto udp (only they have ports here)");
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_DPORT) && r->l4.dport_lo > r->l4.dport_hi) {
		snprintf(err, errlen, "--dport %u-%u is a reversed range", r->l4.dport_lo,
			 r->l4.dport_hi);
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_FLAGS) &&
	    (!(r->l4.fields & RL_MATCH_PROTO) || r->l4.proto != RL_PROTO_TCP)) {
		snprintf(err, errlen, "--tcp-flags needs --proto tcp");
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_FLAGS) &&
	    (!r->l4.tcp_mask || (r->l4.tcp_value & ~r->l4.tcp_mask))) {
		snprintf(err, errlen, "--tcp-flags: the mask is empty or VALUE is outside MASK");
		return -EINVAL;
	}
	if (r->action != RL_RULE_LIMIT && r->block_ns) {
		snprintf(err, errlen, "--block needs a limit policy (--rate ...), not --%s",
			 r->action == RL_RULE_ALLOW ? "allow" : "deny");
		return -EINVAL;
	}
	if (r->block_ns > RL_BLOCK_MAX_NS) {
		snprintf(err, errlen, "--block is longer than 366 days");
		return -EINVAL;
	}
	if (r->action == RL_RULE_ALLOW && r->o.action != RL_ACTION_DROP) {
		snprintf(err, errlen,
			 "--action dry-run has no meaning with --allow (it drops nothing)");
		return -EINVAL;
	}
	memset(&r->params, 0, sizeof(r->params));
	if (r->action == RL_RULE_LIMIT) {
		ret = rl_params_init(&r->params, &r->pol, err, errlen);
		if (!ret)
			ret = rl_policy_check(&r->pol, err, errlen);
		if (ret)
			return ret;
	}
	/* A set: sorted, each prefix once. */
	qsort(r->src4, r->n4, sizeof(*r->src4), cmp4);
	for (size_t i = n = 0; i < r->n4; i++)
		if (!n || cmp4(&r->src4[n - 1], &r->src4[i]))
			r->src4[n++] = r->src4[i];
	r->n4 = n;
	qsort(r->src6, r->n6, sizeof(*r->src6), cmp6);
	for (size_t i = n = 0; i < r->n6; i++)
		if (!n || cmp6(&r->src6[n - 1], &r->src6[i]))
			r->src6[n++] = r->src6[i];
	r->n6 = n;
	if (r->n4 + r->n6 > RL_MAX_PREFIXES) {
		snprintf(err, errlen,
			 "rule '%s' has %zu prefixes, more than the %d of an interface", r->name,
			 r->n4 + r->n6, RL_MAX_PREFIXES);
		return -ENOSPC;
	}
	return build_ranges(r);
}

/* ---- parsing ---- */

/* The first option of @groups given, as "--name", for messages. */
static const char *first_given(const struct rl_args *a, unsigned int groups)
{
	static char s[64];

	for (size_t i = 0; i < rl_opt_count; i++) {
		if (a->given[i] && (rl_opt_table[i].group & groups)) {
			snprintf(s, sizeof(s), "--%s", rl_opt_table[i].name);
			return s;
		}
	}
	return "";
}

static bool given(const struct rl_args *a, const char *name)
{
	const struct rl_opt *o = rl_opt_find(name, ~0U);

	return o && a->given[o - rl_opt_table];
}

/* What a rule's words may not say, beyond single option values. */
static int check_words(const struct rl_args *a, const char **before, char *err, size_t errlen)
{
	bool limit = !a->allow && !a->deny;
	const char *act = a->allow ? "--allow" : "--deny";

	if (!a->npos) {
		snprintf(err, errlen, "give the rule a NAME");
		return -EINVAL;
	}
	if (strlen(a->pos[0]) >= RL_RULE_NAME_LEN) {
		snprintf(err, errlen, "rule name '%s' is longer than %d characters", a->pos[0],
			 RL_RULE_NAME_LEN - 1);
		return -EINVAL;
	}
	if (!rl_rule_name_ok(a->pos[0])) {
		snprintf(err, errlen,
			 "rule name '%s' may hold only letters, digits, '_', '.' and '-' (not "
			 "first)",
			 a->pos[0]);
		return -EINVAL;
	}
	if (!strcmp(a->pos[0], RL_RULE_DEFAULT)) {
		snprintf(err, errlen,
			 "'default' is the last rule, made from the attach policy; name the rule "
			 "otherwise (change the default with set)");
		return -EINVAL;
	}
	if (a->allow && a->deny) {
		snprintf(err, errlen, "--allow and --deny are two actions: give one");
		return -EINVAL;
	}
	if (!limit && rl_args_given(a, RL_G_POLICY)) {
		snprintf(
			err, errlen,
			"%s and %s are two actions: a rule allows, denies, or limits with a policy",
			act, first_given(a, RL_G_POLICY));
		return -EINVAL;
	}
	if (limit && !rl_args_given(a, RL_G_POLICY)) {
		snprintf(err, errlen,
			 "no action: give --allow, --deny or a limit policy (--rate RATE [POLICY "
			 "OPTIONS])");
		return -EINVAL;
	}
	if (limit && !a->pol.rate_set) {
		snprintf(err, errlen, "a limit rule needs --rate (%s alone is no limit)",
			 first_given(a, RL_G_POLICY));
		return -EINVAL;
	}
	if (!limit && a->block_set) {
		snprintf(err, errlen, "--block needs a limit policy (--rate ...), not %s", act);
		return -EINVAL;
	}
	if (given(a, "clock") || given(a, "malformed")) {
		snprintf(err, errlen,
			 "--%s applies to every packet of the interface (attach, set), not to one "
			 "rule",
			 given(a, "clock") ? "clock" : "malformed");
		return -EINVAL;
	}
	if (a->allow && rl_args_given(a, RL_G_LIMITER)) {
		snprintf(err, errlen, "%s has no meaning with --allow (it drops nothing)",
			 first_given(a, RL_G_LIMITER));
		return -EINVAL;
	}
	if (a->deny && given(a, "on-insert-fail")) {
		snprintf(
			err, errlen,
			"--on-insert-fail has no meaning with --deny (it keeps no per-source state)");
		return -EINVAL;
	}
	if (a->before && !before) {
		snprintf(err, errlen,
			 "--before has no meaning here: rules apply in the order they are written");
		return -EINVAL;
	}
	return 0;
}

int rl_rule_parse(struct rl_rule *r, const char **before, const char *const *words, char *err,
		  size_t errlen)
{
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
	if (!ret)
		ret = check_words(&a, before, err, errlen);
	if (ret)
		goto fail;
	snprintf(r->name, sizeof(r->name), "%s", a.pos[0]);
	r->action = a.allow ? RL_RULE_ALLOW : a.deny ? RL_RULE_DENY : RL_RULE_LIMIT;
	r->pol = a.pol;
	r->o = a.o;
	r->block_ns = a.block_set ? a.block_ns : 0;
	ret = rl_rule_prepare(r, err, errlen);
	if (ret)
		goto fail;
	if (rl_rule_src_empty(r))
		pr_warn("rule '%s': its source list is empty: it matches no packet", r->name);
	if (before)
		*before = a.before;
	free(argv);
	return 0;
fail:
	rl_rule_free(r);
	free(argv);
	return ret == -ENOMEM ? ret : -EINVAL;
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

static const char *const action_names[] = { "allow", "deny", "limit" };

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
		jw_uint_field(w, "block_ns", r->block_ns);
	}
	jw_end_object(w);
}

/* ---- matching ---- */

static bool in_ranges4(const struct rl_range4 *v, size_t n, __u32 x)
{
	size_t lo = 0, hi = n;

	/* The first range starting above x; the one before it may hold x. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].lo <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && x <= v[lo - 1].hi;
}

static bool in_ranges6(const struct rl_range6 *v, size_t n, u128 x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].lo <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && x <= v[lo - 1].hi;
}

static bool src_match(const struct rl_rule *r, const struct rl_key *k)
{
	if (rl_key_is_anon(k))
		return false;
	if (rl_key_is_v4(k)) {
		__u32 x = ntohl(k->addr[3]);

		if (r->r4 || !r->n4)
			return in_ranges4(r->r4, r->nr4, x);
		/* Not prepared since the last prefix was added: one by one. */
		for (size_t i = 0; i < r->n4; i++)
			if (!((x ^ ntohl(r->src4[i].addr)) & mask32(r->src4[i].len)))
				return true;
		return false;
	}
	if (r->r6 || !r->n6)
		return in_ranges6(r->r6, r->nr6, addr6_u128(k->addr));
	for (size_t i = 0; i < r->n6; i++)
		if (!((addr6_u128(k->addr) ^ addr6_u128(r->src6[i].addr)) &
		      mask128(r->src6[i].len)))
			return true;
	return false;
}

bool rl_rule_match(const struct rl_rule *r, const struct rl_pkt_info *p)
{
	if (!rl_l4_match(&r->l4, p))
		return false;
	return !r->src_given || src_match(r, &p->src);
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
