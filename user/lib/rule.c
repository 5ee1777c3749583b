// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One rule (rule.h): its model, its match values from text, validation and
 * matching. Nothing here knows the option table: the table's match options
 * call in (opts.c), and a whole rule is read above it (rules.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "level.h"
#include "rule.h"
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

/* The protocols by name: rl_proto_names[i] is proto_numbers[i]. */
const char *const rl_proto_names[] = { "tcp", "udp", "icmp", "icmpv6", NULL };
static const __u8 proto_numbers[] = { RL_PROTO_TCP, RL_PROTO_UDP, RL_PROTO_ICMP, RL_PROTO_ICMPV6 };
#define N_PROTOS (sizeof(proto_numbers) / sizeof(proto_numbers[0]))

_Static_assert(sizeof(rl_proto_names) / sizeof(rl_proto_names[0]) == N_PROTOS + 1,
	       "a number per protocol name");

int rl_parse_proto(const char *s, __u8 *proto)
{
	char err[RL_ERRLEN];
	__u64 v;

	for (size_t i = 0; i < N_PROTOS; i++) {
		if (!strcmp(s, rl_proto_names[i])) {
			*proto = proto_numbers[i];
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
	for (size_t i = 0; i < N_PROTOS; i++)
		if (proto_numbers[i] == proto)
			return rl_proto_names[i];
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

int rl_rule_prepare_about(struct rl_rule *r, const char **about, char *err, size_t errlen)
{
	size_t n;
	int ret;

	*about = NULL;
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
		*about = "dport";
		snprintf(err, errlen,
			 " needs --proto tcp or --proto udp (only they have ports here)");
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_DPORT) && r->l4.dport_lo > r->l4.dport_hi) {
		*about = "dport";
		snprintf(err, errlen, " %u-%u is a reversed range", r->l4.dport_lo, r->l4.dport_hi);
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_FLAGS) &&
	    (!(r->l4.fields & RL_MATCH_PROTO) || r->l4.proto != RL_PROTO_TCP)) {
		*about = "tcp-flags";
		snprintf(err, errlen, " needs --proto tcp");
		return -EINVAL;
	}
	if ((r->l4.fields & RL_MATCH_FLAGS) &&
	    (!r->l4.tcp_mask || (r->l4.tcp_value & ~r->l4.tcp_mask))) {
		*about = "tcp-flags";
		snprintf(err, errlen, ": the mask is empty or VALUE is outside MASK");
		return -EINVAL;
	}
	if (r->action != RL_RULE_LIMIT && r->block_ns) {
		*about = "block";
		snprintf(err, errlen, " needs a limit policy (--rate ...), not --%s",
			 r->action == RL_RULE_ALLOW ? "allow" :
			 r->action == RL_RULE_DENY  ? "deny" :
						      "syn-cookies");
		return -EINVAL;
	}
	if (r->action == RL_RULE_SYN &&
	    (!(r->l4.fields & RL_MATCH_PROTO) || r->l4.proto != RL_PROTO_TCP)) {
		*about = "syn-cookies";
		snprintf(err, errlen, " needs --proto tcp");
		return -EINVAL;
	}
	if (r->action == RL_RULE_SYN && (r->l4.fields & RL_MATCH_FLAGS)) {
		*about = "syn-cookies";
		snprintf(err, errlen,
			 " takes no --tcp-flags: it must see every packet of a connection, the "
			 "ACK that brings the cookie back and what follows");
		return -EINVAL;
	}
	if (r->block_ns > RL_BLOCK_MAX_NS) {
		*about = "block";
		snprintf(err, errlen, " is longer than 366 days");
		return -EINVAL;
	}
	if (r->action == RL_RULE_ALLOW && r->o.action != RL_ACTION_DROP) {
		*about = "action";
		snprintf(err, errlen, " dry-run has no meaning with --allow (it drops nothing)");
		return -EINVAL;
	}
	memset(&r->params, 0, sizeof(r->params));
	memset(r->lvl, 0, sizeof(r->lvl));
	if (r->action == RL_RULE_LIMIT) {
		ret = rl_params_init_about(&r->params, &r->pol, about, err, errlen);
		if (!ret)
			ret = rl_policy_check_about(&r->pol, about, err, errlen);
		if (!ret)
			ret = rl_levels_build_about(r->lvl, &r->pol, &r->params, about, err,
						    errlen);
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

int rl_rule_prepare(struct rl_rule *r, char *err, size_t errlen)
{
	const char *about;
	int ret = rl_rule_prepare_about(r, &about, err, errlen);

	if (ret && about)
		rl_about_cli(err, errlen, about);
	return ret;
}

/* ---- the match options' values ---- */

int rl_rule_set_src(struct rl_rule *r, const char *val, char *err, size_t errlen)
{
	char one[128];

	/* --src '' (an empty list, say from an empty variable) is --src none. */
	if (!*val)
		return rl_rule_add_src(r, RL_SRC_NONE, err, errlen);
	/* A comma list: each CIDR in turn, an empty one (",,", a trailing ',') refused. */
	for (const char *p = val;; p++) {
		size_t n = strcspn(p, ",");
		int ret;

		if (!n || n >= sizeof(one)) {
			snprintf(err, errlen, n ? "'%.40s...' is not a CIDR" : "empty CIDR in '%s'",
				 n ? p : val);
			return -EINVAL;
		}
		memcpy(one, p, n);
		one[n] = '\0';
		ret = rl_rule_add_src(r, one, err, errlen);
		if (ret)
			return ret;
		p += n;
		if (!*p)
			return 0;
	}
}

int rl_rule_set_src_file(struct rl_rule *r, const char *val, char *err, size_t errlen)
{
	/* The rule has a source match even if FILE lists nothing: then it matches no source. */
	r->src_given = true;
	return rl_rule_add_src_file(r, val, err, errlen);
}

int rl_rule_set_proto(struct rl_rule *r, const char *val, char *err, size_t errlen)
{
	size_t off;

	if (rl_parse_proto(val, &r->l4.proto)) {
		off = (size_t)snprintf(err, errlen, "'%s' is not", val);
		for (size_t i = 0; i < N_PROTOS && off < errlen; i++)
			off += (size_t)snprintf(err + off, errlen - off, "%s %s", i ? "," : "",
						rl_proto_names[i]);
		if (off < errlen)
			snprintf(err + off, errlen - off, " or a number 0-255");
		return -EINVAL;
	}
	r->l4.fields |= RL_MATCH_PROTO;
	return 0;
}

int rl_rule_set_dport(struct rl_rule *r, const char *val, char *err, size_t errlen)
{
	char lo[16];
	const char *dash = strchr(val, '-');
	__u64 l, h;
	size_t n = dash ? (size_t)(dash - val) : strlen(val);

	if (n >= sizeof(lo) || !n || (dash && !dash[1])) {
		snprintf(err, errlen, "'%s' is not a port or a range (443, 1024-65535)", val);
		return -EINVAL;
	}
	memcpy(lo, val, n);
	lo[n] = '\0';
	if (rl_parse_u64(lo, 0, 65535, &l, err, errlen) ||
	    rl_parse_u64(dash ? dash + 1 : lo, 0, 65535, &h, err, errlen)) {
		snprintf(err, errlen, "'%s': a port is a whole number from 0 to 65535", val);
		return -EINVAL;
	}
	if (l > h) {
		snprintf(err, errlen, "'%s' is a reversed range (give LOW-HIGH: %llu-%llu)", val,
			 (unsigned long long)h, (unsigned long long)l);
		return -EINVAL;
	}
	r->l4.fields |= RL_MATCH_DPORT;
	r->l4.dport_lo = (__u16)l;
	r->l4.dport_hi = (__u16)h;
	return 0;
}

int rl_rule_set_tcp_flags(struct rl_rule *r, const char *val, char *err, size_t errlen)
{
	const char *slash = strchr(val, '/');
	char v[16];
	__u8 value, mask;
	size_t n = slash ? (size_t)(slash - val) : strlen(val);

	if (!strcmp(val, "syn")) {
		value = RL_TCP_SYN;
		mask = RL_TCP_SYN | RL_TCP_ACK;
		goto done;
	}
	if (n >= sizeof(v))
		goto bad;
	memcpy(v, val, n);
	v[n] = '\0';
	/* VALUE/MASK; VALUE and VALUE/ mean VALUE/VALUE: these set, the others any. */
	if (rl_parse_tcp_flag_letters(v, &value) ||
	    (slash && slash[1] && rl_parse_tcp_flag_letters(slash + 1, &mask)))
		goto bad;
	if (!slash || !slash[1])
		mask = value;
	if (!mask) {
		snprintf(err, errlen, "'%s' has an empty mask: it would match every packet", val);
		return -EINVAL;
	}
	if (value & ~mask) {
		snprintf(err, errlen,
			 "'%s': flags set in VALUE must be in MASK, or it never matches", val);
		return -EINVAL;
	}
done:
	r->l4.fields |= RL_MATCH_FLAGS;
	r->l4.tcp_value = value;
	r->l4.tcp_mask = mask;
	return 0;
bad:
	snprintf(
		err, errlen,
		"'%s' is not syn or VALUE/MASK in tcpdump's letters F S R P A U E W (S/SA, R/R, F/)",
		val);
	return -EINVAL;
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
	if (!r->src_given)
		return true;
	return !(p->info & RL_PKT_NOSRC) && src_match(r, &p->src);
}
