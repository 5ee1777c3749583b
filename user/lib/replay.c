// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Frames through the XDP program's steps in userspace (see replay.h). The
 * parser is the kernel's (include/rl_parse.h); the rules and the policy are
 * rl_rsim's (trace.c), which tests/test_rules_kernel.c and tests/test_fuzz.c
 * hold to the kernel packet for packet; what is here is the order of the
 * steps and the counting, written after bpf/xdp_ratelimit.bpf.c (slow_path(),
 * decide()) and bpf/rules.h (rl_rule_apply()).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/bpf.h>
#include "counters.h"
#include "rl_parse.h"
#include "replay.h"

void rl_frame_parse(struct rl_frame *f, const void *data, __u32 caplen, __u32 len, int need_l4)
{
	struct hdr_cursor c = { .pos = (void *)data,
				.end = (void *)data + caplen,
				.want = (void *)data };

	memset(f, 0, sizeof(*f));
	f->len = len;
	/* The program's own call (slow_path(), rules_path()): proto always, L4 if asked. */
	f->kind = rl_parse_frame(&c, &f->pi.src, &f->bad, &f->pi, RL_PARSE_PROTO, need_l4);
	f->want = (__u32)(c.want - (void *)data);
	f->snapped = f->want > caplen && caplen < len;
}

bool rl_replay_need_l4(const struct rl_ruleset *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->rules[i].l4.fields & (RL_MATCH_DPORT | RL_MATCH_FLAGS))
			return true;
	return false;
}

int rl_replay_init(struct rl_replay *r, const struct rl_ruleset *set, bool malformed_drop)
{
	memset(r, 0, sizeof(*r));
	r->set = set;
	r->malformed_drop = malformed_drop;
	return rl_rsim_init(&r->sim, set);
}

void rl_replay_free(struct rl_replay *r)
{
	rl_rsim_free(&r->sim);
}

/* A malformed frame's reason by the name of its counter, from the counter table (stats'). */
static const char *malformed_why(__u32 bad)
{
	size_t off = offsetof(struct rl_counters, malformed[bad]);

	for (size_t i = 0; bad < RL_BAD__COUNT && i < rl_counter_count; i++)
		if (rl_counter_table[i].off == off)
			return rl_counter_table[i].name;
	return "malformed";
}

int rl_replay_frame(struct rl_replay *r, const struct rl_frame *f, __u64 now,
		    struct rl_replay_res *res)
{
	struct rl_counters *c = &r->cnt;
	size_t def = r->set->n - 1, before;
	__u64 malformed = 0;
	int pass;

	memset(res, 0, sizeof(*res));
	c->rx_packets++;
	c->rx_bytes += f->len;
	switch (f->kind) {
	case RL_PARSED_MALFORMED:
		/* 1. Frames no limit looks at, rules included (rules_path() returns -1). */
		c->malformed[f->bad < RL_BAD__COUNT ? f->bad : RL_BAD_ETH]++;
		res->why = malformed_why(f->bad);
		pass = !r->malformed_drop;
		break;
	case RL_PARSED_NOT_IP:
		c->not_ip++;
		res->why = "not_ip";
		pass = 1;
		break;
	case RL_PARSED_ND:
		c->nd++;
		res->why = "nd";
		pass = 1;
		break;
	default:
		/* 2. and 3.: the first rule that matches, "default" last. */
		res->limited = true;
		before = r->sim.tabs[def].count;
		pass = rl_rsim_packet(&r->sim, &f->pi, now, f->len, &res->r);
		if (pass < 0)
			return pass;
		if (res->r.rule != def) {
			/* A rule's verdict: the interface counts only passed and dropped. */
			res->why = rl_reason_name(res->r.reason);
			break;
		}
		/* The default path (slow_path(), decide()): family, new source, reason. */
		if (f->kind == RL_PARSED_IPV6)
			c->ipv6++;
		c->new_sources += r->sim.tabs[def].count - before;
		if (res->r.dry_run) {
			c->would_drop++;
			c->would_drop_bytes += f->len;
			res->why = "would_drop";
		} else if (!pass) {
			c->limited++;
			res->why = "limited";
		} else {
			res->why = "passed";
		}
		break;
	}
	/* 4. The verdict, counted as rl_count_pass() and rl_count_drop() do. */
	if (pass) {
		c->passed++;
		c->passed_bytes += f->len;
	} else {
		c->dropped++;
		c->dropped_bytes += f->len;
	}
	/* Derived as user/lib/maps.c derives it: what is not IPv6, ND, not IP or malformed. */
	for (int i = 0; i < RL_BAD__COUNT; i++)
		malformed += c->malformed[i];
	c->ipv4 = c->rx_packets - c->ipv6 - c->nd - c->not_ip - malformed;
	res->verdict = pass ? XDP_PASS : XDP_DROP;
	return 0;
}
