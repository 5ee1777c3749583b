// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "rl_block.h"
#include "source.h"
#include "trace.h"

int rl_parse_timestamp(const char *s, __u64 *ns)
{
	unsigned __int128 sec = 0, v;
	__u64 frac = 0;
	int digits = 0, fdigits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		sec = sec * 10 + (__u64)(*s - '0');
		if (sec > ~0ULL)
			return -ERANGE;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fdigits++) {
			if (fdigits == 9)
				return -ERANGE;
			frac = frac * 10 + (__u64)(*s - '0');
		}
	}
	if (*s || (!digits && !fdigits))
		return -EINVAL;
	for (; fdigits < 9; fdigits++)
		frac *= 10;
	/* Up to 2^64 - 1 ns, 18446744073.709551615 s. */
	v = sec * 1000000000ULL + frac;
	if (v > ~0ULL)
		return -ERANGE;
	*ns = (__u64)v;
	return 0;
}

int rl_trace_getline(FILE *in, char *buf, size_t size, char *err, size_t errlen)
{
	size_t n = 0;
	int c;

	if (size <= RL_TRACE_LINE_MAX) {
		snprintf(err, errlen, "line buffer too small");
		return -EINVAL;
	}
	while ((c = getc_unlocked(in)) != EOF && c != '\n') {
		/* A NUL would end the line early for every parser after it. */
		if (!c) {
			snprintf(err, errlen, "holds a NUL byte (at byte %zu): not a text trace",
				 n + 1);
			return -EINVAL;
		}
		if (n == RL_TRACE_LINE_MAX) {
			snprintf(err, errlen, "is longer than %d bytes", RL_TRACE_LINE_MAX);
			return -EINVAL;
		}
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (c == EOF && ferror(in))
		return -EIO;
	return c != EOF || n ? 1 : 0;
}

/* "tcp/443", "udp/53", "icmp", "tcp", "44": PROTO[/DPORT]. */
static int parse_l4(const char *f, struct rl_trace_pkt *pkt, char *err, size_t errlen)
{
	const char *slash = strchr(f, '/');
	char proto[16], msg[RL_ERRLEN];
	size_t n = slash ? (size_t)(slash - f) : strlen(f);
	__u64 port;

	if (n < sizeof(proto)) {
		memcpy(proto, f, n);
		proto[n] = '\0';
	}
	if (n >= sizeof(proto) || rl_parse_proto(proto, &pkt->proto)) {
		snprintf(err, errlen, "protocol '%.*s' is not tcp, udp, icmp, icmpv6 or 0-255",
			 (int)n, f);
		return -EINVAL;
	}
	pkt->info = RL_PKT_PROTO;
	if (!slash)
		return 0;
	if (pkt->proto != RL_PROTO_TCP && pkt->proto != RL_PROTO_UDP) {
		snprintf(err, errlen, "'%s': only tcp and udp have a port", f);
		return -EINVAL;
	}
	if (rl_parse_u64(slash + 1, 0, 65535, &port, msg, sizeof(msg))) {
		snprintf(err, errlen, "port: %s", msg);
		return -EINVAL;
	}
	pkt->dport = (__u16)port;
	pkt->info |= RL_PKT_L4;
	return 0;
}

int rl_trace_line(char *line, struct rl_trace_pkt *pkt, char *err, size_t errlen)
{
	char *fields[5], *save = NULL, *tok;
	int n = 0, ret;
	__u64 len = 64;

	line[strcspn(line, "#\r\n")] = '\0';
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == 5) {
			snprintf(
				err, errlen,
				"too many fields (TIMESTAMP [SOURCE [LENGTH [PROTO[/DPORT] [FLAGS]]]])");
			return -EINVAL;
		}
		fields[n++] = tok;
	}
	if (!n)
		return 0;
	ret = rl_parse_timestamp(fields[0], &pkt->ns);
	if (ret) {
		snprintf(err, errlen,
			 ret == -ERANGE ?
				 "timestamp '%s' has more than 9 decimals or is too large" :
				 "timestamp '%s' is not seconds (e.g. 12.5 or 0.000001)",
			 fields[0]);
		return -EINVAL;
	}
	pkt->time = fields[0];
	rl_key_anon(&pkt->key);
	pkt->has_source = n > 1;
	if (n > 1 && rl_key_parse(fields[1], &pkt->key)) {
		snprintf(err, errlen, "source '%s' is not an IPv4 or IPv6 address", fields[1]);
		return -EINVAL;
	}
	if (n > 2 && rl_parse_u64(fields[2], 1, RL_MAX_FRAME, &len, err, errlen)) {
		char msg[RL_ERRLEN];

		snprintf(msg, sizeof(msg), "length: %s", err);
		snprintf(err, errlen, "%s", msg);
		return -EINVAL;
	}
	pkt->len = (__u32)len;
	pkt->info = 0;
	pkt->proto = 0;
	pkt->dport = 0;
	pkt->tcp_flags = 0;
	if (n > 3 && parse_l4(fields[3], pkt, err, errlen))
		return -EINVAL;
	if (n > 4) {
		if (pkt->proto != RL_PROTO_TCP || !(pkt->info & RL_PKT_L4)) {
			snprintf(err, errlen,
				 "flags '%s' need a tcp packet with a port (tcp/DPORT)", fields[4]);
			return -EINVAL;
		}
		if (rl_parse_tcp_flag_letters(fields[4], &pkt->tcp_flags)) {
			snprintf(
				err, errlen,
				"flags '%s' are not tcpdump's letters F S R P A U E W ('.' for none)",
				fields[4]);
			return -EINVAL;
		}
	}
	return 1;
}

void rl_trace_pkt_info(const struct rl_trace_pkt *pkt, struct rl_pkt_info *p)
{
	memset(p, 0, sizeof(*p));
	p->src = pkt->key;
	p->info = pkt->info | (pkt->has_source ? 0 : RL_PKT_NOSRC);
	p->proto = pkt->proto;
	p->dport = pkt->dport;
	p->tcp_flags = pkt->tcp_flags;
}

int rl_sim_init(struct rl_sim *s, const struct rl_policy *pol, char *err, size_t errlen)
{
	const char *about;
	int ret;

	memset(s, 0, sizeof(*s));
	s->pol = *pol;
	rl_srctab_init(&s->tab);
	rl_level_sim_init(&s->ls, s->lvl);
	ret = rl_params_init(&s->params, pol, err, errlen);
	if (ret)
		return ret;
	ret = rl_levels_build_about(s->lvl, pol, &s->params, &about, err, errlen);
	if (ret && about)
		rl_about_cli(err, errlen, about);
	return ret;
}

void rl_sim_free(struct rl_sim *s)
{
	rl_srctab_free(&s->tab);
	rl_level_sim_free(&s->ls);
}

/* What a packet of @len bytes costs under @p: the kernel's packet_cost() (bpf/clock.h). */
static __u64 cost_of(const struct rl_params *p, __u32 len)
{
	if (!p->bytes)
		return 1;
	return len < RL_MAX_FRAME ? len : RL_MAX_FRAME;
}

int rl_sim_packet(struct rl_sim *s, struct rl_key *key, __u64 now, __u32 len, struct rl_src **srcp)
{
	__u64 next, cost = cost_of(&s->params, len);
	struct rl_level_held held;
	struct rl_src *src;
	int created, pass, v;

	/* The levels above the source first, without a write (bpf/aggregate.h). */
	v = rl_level_sim_check(&s->ls, key, now, len, &held);
	if (v < 0)
		return v;
	if (!rl_key_is_anon(key))
		rl_key_mask(key, s->pol.prefix4, s->pol.prefix6);
	src = rl_srctab_get(&s->tab, key, &created);
	if (!src)
		return -ENOMEM;
	s->level = (unsigned int)v;
	if (v) {
		pass = 0;
		goto out;
	}
	if (!src->has_state && s->lvl[RL_LVL_ADMIT - 1].on) {
		/* No state: the admission cap gives it one, or limits it with the others. */
		v = rl_level_sim_admit(&s->ls, key, now, len);
		if (v < 0)
			return v;
		if (v < 2) {
			/* Limited with the others as one: a pass is charged to its levels too. */
			pass = v;
			s->level = pass ? 0 : RL_LVL_NEW;
			if (pass)
				rl_level_sim_charge(&s->ls, &held, now, len);
			goto out;
		}
	}
	if (!src->has_state) {
		src->state = rl_initial_state(&s->params, now);
		src->has_state = 1;
		s->new_sources++;
	}
	pass = rl_step(&s->params, src->state, now, cost, &next);
	if (pass) {
		src->state = next;
		rl_level_sim_charge(&s->ls, &held, now, len);
	}
out:
	if (pass) {
		src->passed++;
		s->passed++;
	} else {
		src->dropped++;
		s->dropped++;
	}
	if (srcp)
		*srcp = src;
	return pass;
}

static const char *const reason_names[] = {
	[RL_REASON_ALLOWED] = "allowed",
	[RL_REASON_DENIED] = "denied",
	[RL_REASON_PASSED] = "passed",
	[RL_REASON_LIMITED] = "limited",
	[RL_REASON_BLOCKED] = "blocked",
	[RL_REASON_AGG_LIMITED] = "aggregate-limited",
	[RL_REASON_IFACE_LIMITED] = "iface-limited",
};

const char *rl_reason_name(enum rl_rule_reason r)
{
	return (unsigned int)r <= RL_REASON_IFACE_LIMITED ? reason_names[r] : "unknown";
}

int rl_rsim_init(struct rl_rsim *s, const struct rl_ruleset *set)
{
	memset(s, 0, sizeof(*s));
	s->set = set;
	s->tabs = calloc(set->n, sizeof(*s->tabs));
	s->ls = calloc(set->n, sizeof(*s->ls));
	s->cnt = calloc(set->n, sizeof(*s->cnt));
	if (!s->tabs || !s->ls || !s->cnt) {
		rl_rsim_free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->n; i++) {
		rl_srctab_init(&s->tabs[i]);
		/* The cookie is the kernel's, made from its secret: nothing to replay. */
		if (set->rules[i].action == RL_RULE_SYN) {
			rl_rsim_free(s);
			return -EOPNOTSUPP;
		}
		rl_level_sim_init(&s->ls[i], set->rules[i].lvl);
	}
	return 0;
}

void rl_rsim_free(struct rl_rsim *s)
{
	for (size_t i = 0; s->tabs && s->ls && i < s->set->n; i++) {
		rl_srctab_free(&s->tabs[i]);
		rl_level_sim_free(&s->ls[i]);
	}
	free(s->tabs);
	free(s->ls);
	free(s->cnt);
	memset(s, 0, sizeof(*s));
}

int rl_rsim_packet(struct rl_rsim *s, const struct rl_pkt_info *p, __u64 now, __u32 len,
		   struct rl_rsim_result *res)
{
	size_t i = rl_ruleset_match(s->set, p);
	const struct rl_rule *r = &s->set->rules[i];
	struct rl_rule_counters *c = &s->cnt[i];
	struct rl_level_held held;
	struct rl_block_state bs;
	struct rl_src *src;
	int created, pass, v;

	memset(res, 0, sizeof(*res));
	res->rule = i;
	res->key = p->src;
	switch (r->action) {
	case RL_RULE_ALLOW:
		res->reason = RL_REASON_ALLOWED;
		c->allowed++;
		pass = 1;
		break;
	case RL_RULE_DENY:
		res->reason = RL_REASON_DENIED;
		c->denied++;
		pass = 0;
		break;
	default:
		/* The rule's levels first, as bpf/rules.h does: a refusal charges nothing. */
		v = rl_level_sim_check(&s->ls[i], &p->src, now, len, &held);
		if (v < 0)
			return v;
		if (!(p->info & RL_PKT_NOSRC))
			rl_key_mask(&res->key, r->pol.prefix4, r->pol.prefix6);
		if (v) {
			/* Refused above the source: the rule keeps no state for it (as the program). */
			res->reason = v == RL_LVL_PREFIX ? RL_REASON_AGG_LIMITED :
							   RL_REASON_IFACE_LIMITED;
			if (v == RL_LVL_PREFIX)
				c->agg_limited++;
			else
				c->iface_limited++;
			pass = 0;
			break;
		}
		src = rl_srctab_get(&s->tabs[i], &res->key, &created);
		if (!src)
			return -ENOMEM;
		if (created)
			src->state = rl_initial_state(&r->params, now);
		bs = (struct rl_block_state){ src->state, src->until };
		switch (rl_block_step(&r->params, r->block_ns, &bs, now,
				      cost_of(&r->params, len))) {
		case RL_BLOCK_PASS:
			res->reason = RL_REASON_PASSED;
			break;
		case RL_BLOCK_LIMITED:
			res->reason = RL_REASON_LIMITED;
			c->limited++;
			break;
		default:
			res->reason = RL_REASON_BLOCKED;
			c->blocked++;
			break;
		}
		src->state = bs.state;
		src->until = bs.until;
		pass = res->reason == RL_REASON_PASSED;
		if (pass)
			rl_level_sim_charge(&s->ls[i], &held, now, len);
		res->src = src;
		break;
	}
	if (!pass && r->o.action == RL_ACTION_DRY_RUN) {
		res->dry_run = true;
		c->would_drop++;
		pass = 1;
	}
	if (pass) {
		c->passed++;
		c->passed_bytes += len;
	} else {
		c->dropped++;
		c->dropped_bytes += len;
	}
	if (res->src) {
		if (pass)
			res->src->passed++;
		else
			res->src->dropped++;
	}
	return pass;
}
