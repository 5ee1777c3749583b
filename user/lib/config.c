// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "config.h"
#include "level.h"

typedef unsigned __int128 u128;

void rl_opts_defaults(struct rl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->action = RL_ACTION_DROP;
	o->fail_policy = RL_FAIL_PASS;
	o->malformed_drop = true;
}

static void prefix_mask(__u32 *mask, unsigned int words, unsigned int bits)
{
	for (unsigned int i = 0; i < words; i++) {
		unsigned int keep = bits > 32 ? 32 : bits;

		mask[i] = keep ? htonl(~0U << (32 - keep)) : 0;
		bits -= keep;
	}
}

static bool is_bucket(__u32 algo)
{
	return algo == RL_ALGO_TOKEN_BUCKET || algo == RL_ALGO_GCRA;
}

__u64 rl_coarse_tick_ns(void)
{
	struct timespec ts;

	/* The resolution of the coarse clocks is the tick (TICK_NSEC). */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) || (!ts.tv_sec && !ts.tv_nsec))
		return 10000000; /* HZ=100, the longest tick Linux has */
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * The coarse clock jumps by a tick at a time. A bucket then earns a tick's
 * worth of its rate at once, and keeps only the burst of it; a window shorter
 * than a tick is skipped over. Either way the source would get less than its
 * rate, so such a policy is refused rather than quietly changed.
 */
static int coarse_check(const struct rl_config *cfg, char *err, size_t errlen)
{
	const char *unit = cfg->params.bytes ? "bytes" : "packets";
	u128 earned, need;
	__u64 tick;

	if (cfg->clock != RL_CLOCK_COARSE)
		return 0;
	tick = rl_coarse_tick_ns();
	if (!is_bucket(cfg->params.algo)) {
		if (cfg->params.window_ns >= tick)
			return 0;
		snprintf(err, errlen,
			 "--clock coarse: the window (%llu ns) is shorter than one kernel tick "
			 "(%llu ns), so windows would be skipped; use --window %llums or longer, "
			 "or --clock precise",
			 (unsigned long long)cfg->params.window_ns, (unsigned long long)tick,
			 (unsigned long long)((tick + 999999) / 1000000));
		return -EINVAL;
	}
	/* burst >= rate x tick, i.e. burst x den x 1e9 >= num x tick. */
	earned = (u128)cfg->rate_num * tick;
	need = (u128)cfg->burst * cfg->rate_den * 1000000000ULL;
	if (need >= earned)
		return 0;
	/* The smallest burst that does: ceil(num x tick / (den x 1e9)). */
	need = (earned + (u128)cfg->rate_den * 1000000000ULL - 1) /
	       ((u128)cfg->rate_den * 1000000000ULL);
	snprintf(err, errlen,
		 "--clock coarse: the burst (%llu %s) is less than the rate earns in one kernel "
		 "tick (%llu ns), so the source would get less than its rate; use --burst %llu "
		 "or more, or --clock precise",
		 (unsigned long long)cfg->burst, unit, (unsigned long long)tick,
		 (unsigned long long)need);
	return -EINVAL;
}

int rl_config_build(struct rl_config *cfg, const struct rl_policy *pol, const struct rl_opts *o,
		    const struct rl_config *prev, char *err, size_t errlen)
{
	const char *about = NULL;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	ret = rl_params_init(&cfg->params, pol, err, errlen);
	if (!ret)
		ret = rl_policy_check(pol, err, errlen);
	if (ret)
		return ret;
	/* The levels above the source (user/lib/level.h). */
	ret = rl_levels_build_about(cfg->lvl, pol, &cfg->params, &about, err, errlen);
	if (ret) {
		if (about)
			rl_about_cli(err, errlen, about);
		return ret;
	}
	prefix_mask(&cfg->mask4, 1, pol->prefix4);
	prefix_mask(cfg->mask6, 4, pol->prefix6);
	cfg->prefix4 = pol->prefix4;
	cfg->prefix6 = pol->prefix6;
	cfg->action = o->action;
	cfg->fail_policy = o->fail_policy;
	cfg->malformed_drop = o->malformed_drop;
	cfg->clock = o->clock;
	cfg->rate_num = pol->rate_num;
	cfg->rate_den = pol->rate_den;
	cfg->window_ns = pol->window_ns;
	if (is_bucket(pol->algo))
		cfg->burst = cfg->params.tau / cfg->params.unit_cost;
	cfg->initial = pol->initial;
	cfg->initial_set = pol->initial_set;
	cfg->gen = 1;
	cfg->syn = o->syn;
	/* What the SYN-ACK says, unless the caller found the interface's (synproxy.h). */
	/* Also without ports: a syn-cookies rule's SYN-ACK says the same. */
	if (!cfg->syn.mss4) {
		cfg->syn.mss4 = RL_SYN_DEFAULT_MSS4;
		cfg->syn.mss6 = RL_SYN_DEFAULT_MSS6;
		cfg->syn.wscale = RL_SYN_DEFAULT_WSCALE;
		cfg->syn.ttl = RL_SYN_DEFAULT_TTL;
	}
	ret = coarse_check(cfg, err, errlen);
	if (ret)
		return ret;
	if (!prev)
		return 0;
	/* Generation 0 means "not configured": skip it when the counter wraps. */
	cfg->gen = prev->gen + 1 ? prev->gen + 1 : 1;
	/* Not policy: a set while the sync agent counts keeps it counting. */
	cfg->sync_count = prev->sync_count;
	/* The same table: its secret stays (user/lib/sa.h, rl_sa_key_new()). */
	cfg->sa_key = prev->sa_key;
	cfg->has_prev = 1;
	cfg->prev = prev->params;
	cfg->prev_mask4 = prev->mask4;
	memcpy(cfg->prev_mask6, prev->mask6, sizeof(cfg->prev_mask6));
	rl_carry_setup(&cfg->params, &prev->params, &cfg->carry, &cfg->carry_mult,
		       &cfg->carry_shift);
	/* Nothing to carry (RL_CARRY_NONE): spare new sources the lookup of the old generation. */
	cfg->has_prev = cfg->carry != RL_CARRY_NONE;
	rl_levels_carry(cfg, prev);
	return 0;
}

bool rl_config_same(const struct rl_config *a, const struct rl_config *b)
{
	/* Field by field: the struct has padding, and gen and carry fields differ by design. */
	return !memcmp(&a->params, &b->params, sizeof(a->params)) && a->mask4 == b->mask4 &&
	       !memcmp(a->mask6, b->mask6, sizeof(a->mask6)) && a->action == b->action &&
	       a->fail_policy == b->fail_policy && a->malformed_drop == b->malformed_drop &&
	       a->clock == b->clock && a->prefix4 == b->prefix4 && a->prefix6 == b->prefix6 &&
	       a->initial_set == b->initial_set && a->rate_num == b->rate_num &&
	       a->rate_den == b->rate_den && a->burst == b->burst &&
	       (!a->initial_set || a->initial == b->initial) && a->window_ns == b->window_ns &&
	       rl_levels_same(a, b) && !memcmp(&a->syn, &b->syn, sizeof(a->syn));
}

void rl_config_policy(const struct rl_config *cfg, struct rl_policy *pol, struct rl_opts *o)
{
	rl_policy_defaults(pol);
	pol->algo = cfg->params.algo;
	pol->bytes = cfg->params.bytes;
	pol->rate_num = cfg->rate_num;
	pol->rate_den = cfg->rate_den;
	pol->rate_set = true;
	if (is_bucket(cfg->params.algo)) {
		pol->burst = cfg->burst;
		pol->burst_set = true;
		pol->initial = cfg->initial;
		pol->initial_set = cfg->initial_set;
	} else {
		pol->window_ns = cfg->window_ns;
		pol->window_set = true;
	}
	pol->prefix4 = cfg->prefix4;
	pol->prefix6 = cfg->prefix6;
	rl_levels_policy(cfg, pol);
	rl_opts_defaults(o);
	o->action = cfg->action;
	o->fail_policy = cfg->fail_policy;
	o->malformed_drop = cfg->malformed_drop;
	o->clock = cfg->clock;
	o->syn = cfg->syn;
}

int rl_syn_ports_parse(const char *val, struct rl_syn_cfg *syn, char *err, size_t errlen)
{
	const char *p = val;
	__u16 n = 0;

	memset(syn->port, 0, sizeof(syn->port));
	if (!strcmp(val, "none")) {
		syn->n = 0;
		return 0;
	}
	while (1) {
		size_t len = strcspn(p, ","), dash;
		char word[16], *end;
		unsigned long lo, hi;

		if (!len || len >= sizeof(word))
			goto bad;
		memcpy(word, p, len);
		word[len] = '\0';
		dash = strcspn(word, "-");
		if (word[0] < '0' || word[0] > '9')
			goto bad;
		lo = strtoul(word, &end, 10);
		if (end != word + dash)
			goto bad;
		hi = lo;
		if (word[dash]) {
			if (word[dash + 1] < '0' || word[dash + 1] > '9')
				goto bad;
			hi = strtoul(word + dash + 1, &end, 10);
			if (*end)
				goto bad;
		}
		if (!lo || lo > 65535 || !hi || hi > 65535) {
			snprintf(err, errlen, "'%s': a port is a whole number from 1 to 65535",
				 word);
			return -EINVAL;
		}
		if (lo > hi) {
			snprintf(err, errlen, "'%s' is a reversed range (give LOW-HIGH: %lu-%lu)",
				 word, hi, lo);
			return -EINVAL;
		}
		if (n == RL_SYN_MAX_RANGES) {
			snprintf(
				err, errlen,
				"'%s' has more than %d ports and ranges (join neighbours into a range, "
				"or use syn-cookies rules)",
				val, RL_SYN_MAX_RANGES);
			return -EINVAL;
		}
		syn->port[n].lo = (__u16)lo;
		syn->port[n].hi = (__u16)hi;
		n++;
		if (!p[len])
			break;
		p += len + 1;
	}
	syn->n = n;
	return 0;
bad:
	snprintf(err, errlen,
		 "'%s' is not a list of TCP ports and ranges (443, 80,443, 8000-8999) nor none",
		 val);
	return -EINVAL;
}

char *rl_syn_ports_str(const struct rl_syn_cfg *syn, char *buf, size_t len)
{
	size_t off = 0;

	snprintf(buf, len, "none");
	for (__u16 i = 0; i < syn->n && i < RL_SYN_MAX_RANGES && off < len; i++) {
		if (syn->port[i].lo == syn->port[i].hi)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "",
						syn->port[i].lo);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%u-%u", i ? "," : "",
						syn->port[i].lo, syn->port[i].hi);
	}
	return buf;
}
