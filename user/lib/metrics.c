// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The Prometheus text exposition of every limiter on the host (see metrics.h).
 * A scrape reads each pin directory afresh: an interface attached since the
 * last scrape appears, a detached one is gone, with nothing kept in between.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "aggwalk.h"
#include "config.h"
#include "counters.h"
#include "level.h"
#include "maps.h"
#include "memory.h"
#include "metrics.h"
#include "rl_sa.h"
#include "pins.h"
#include "policy.h"
#include "rulemaps.h"
#include "sync_kern.h"

/* Pin directories one scrape reads: far more interfaces than a host has. */
#define MAX_PINNED 4096

/* One rule (besides default) as a scrape saw it. */
struct ruledata {
	char name[RL_RULE_NAME_LEN];
	__u8 action; /* enum rl_rule_action */
	struct rl_rule_counters c;
	__u64 sources, blocked;
};

/*
 * The aggregates (prefix level) served one series each: the most used of
 * each limiter, a bounded number whatever a flood spreads them over.
 */
#define TOP_AGGREGATES 10

/* One aggregate among the most used, as a scrape saw it. */
struct aggdata {
	char name[64]; /* "198.18.1.0/24" */
	char rule[RL_RULE_NAME_LEN]; /* "default", or the limit rule's */
	double used;
};

/* The levels above the source of one limiter (include/rl_agg.h), by level id. */
struct leveldata {
	__u64 states[RL_LVL__COUNT], over[RL_LVL__COUNT];
	double used[RL_LVL__COUNT]; /* the interface and new-sources levels of default: one state */
	bool has_used[RL_LVL__COUNT];
	struct aggdata top[TOP_AGGREGATES];
	int ntop;
};

/* One limiter as a scrape saw it. */
struct ifdata {
	const struct rl_pinned *p;
	struct rl_counters c;
	struct rl_config cfg;
	__u64 sources[2], capacity[2]; /* [0] IPv4, [1] IPv6 */
	__u64 memory; /* bytes its pinned maps charge; 0 if unread */
	struct ruledata *rules; /* malloc'd, nrules of them */
	__u32 nrules;
	struct rl_sync_status sync; /* the sync agent's, if has_sync */
	bool has_sync;
	__u32 limiter; /* rl_counters' map id: one per limiter, whatever its members */
	struct leveldata lv;
};

/* An interface that shares the limiter of d[of] (attach --share): reported under it. */
struct member {
	const struct rl_pinned *p;
	int of;
};

/* A label value: backslash, double quote and newline escaped, as the format wants. */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP xdp_ratelimit_%s %s\n# TYPE xdp_ratelimit_%s %s\n", name, help, name,
		type);
}

/* "xdp_ratelimit_NAME{iface="...",netns="..."" : the caller adds labels and the value. */
static void sample(FILE *f, const char *name, const struct ifdata *d)
{
	fprintf(f, "xdp_ratelimit_%s{iface=\"", name);
	label_value(f, d->p->name);
	fprintf(f, "\",netns=\"%llu\"", (unsigned long long)d->p->netns_ino);
}

/*
 * The counters are those of the counter table (user/lib/counters.h): a
 * metric per row with a metric_help, its rows wherever they stand.
 */
static void print_counters(FILE *f, const struct ifdata *d, int n)
{
	for (size_t h = 0; h < rl_counter_count; h++) {
		const struct rl_counter_info *fam = &rl_counter_table[h];

		if (!fam->metric || !fam->metric_help)
			continue;
		family(f, fam->metric, "counter", fam->metric_help);
		for (size_t m = h; m < rl_counter_count; m++) {
			const struct rl_counter_info *c = &rl_counter_table[m];

			if (!c->metric || strcmp(c->metric, fam->metric))
				continue;
			for (int i = 0; i < n; i++) {
				sample(f, c->metric, &d[i]);
				if (c->label)
					fprintf(f, ",%s", c->label);
				fprintf(f, "} %llu\n",
					*(const unsigned long long *)((const char *)&d[i].c +
								      c->off));
			}
		}
	}
}

struct count_ctx {
	__u32 gen;
	__u64 n[2];
};

static int count_one(const struct rl_state_key *k, __u64 state, __u64 read_ns, void *ctx)
{
	struct count_ctx *c = ctx;
	bool v4 = !k->src.addr[0] && !k->src.addr[1] && k->src.addr[2] == htonl(0xffff);

	(void)state;
	(void)read_ns;
	if (k->gen == c->gen)
		c->n[v4 ? 0 : 1]++;
	return 0;
}

/* The packet clock now: bpf_ktime_get_ns() is CLOCK_MONOTONIC, the coarse one its _COARSE. */
static __u64 packet_now(__u32 clock)
{
	struct timespec ts;

	clock_gettime(clock == RL_CLOCK_COARSE ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The rules' counters, sources and blocked sources. Counters are read after
 * the walk: a rule's are then never behind what the walk saw of it.
 */
static int read_rules(const struct rl_pins *pins, struct ifdata *d)
{
	__u64 *sources = NULL, *blocked = NULL;
	struct rl_rules_cfg *cfg;
	int ret;

	cfg = malloc(sizeof(*cfg));
	sources = calloc(RL_RULE_SLOTS, sizeof(*sources));
	blocked = calloc(RL_RULE_SLOTS, sizeof(*blocked));
	if (!cfg || !sources || !blocked) {
		ret = -ENOMEM;
		goto out;
	}
	ret = rl_rules_read(pins, cfg);
	if (ret || !cfg->n)
		goto out;
	ret = rl_rules_tally(pins, cfg, packet_now(d->cfg.clock), sources, blocked);
	if (ret)
		goto out;
	d->rules = calloc(cfg->n, sizeof(*d->rules));
	if (!d->rules) {
		ret = -ENOMEM;
		goto out;
	}
	for (__u32 i = 0; i < cfg->n && !ret; i++) {
		struct ruledata *r = &d->rules[i];

		snprintf(r->name, sizeof(r->name), "%s", cfg->r[i].name);
		r->action = cfg->r[i].action;
		r->sources = sources[i];
		r->blocked = blocked[i];
		ret = rl_rules_counters(pins, cfg->r[i].slot, &r->c);
	}
	d->nrules = cfg->n;
out:
	free(cfg);
	free(sources);
	free(blocked);
	return ret;
}

static __u64 max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/* A level state, into the tallies of its limiter, and the aggregates among the most used. */
static int level_one(const struct rl_level_row *row, void *ctx)
{
	struct leveldata *lv = ctx;
	struct aggdata *a;
	int i;

	lv->states[row->id]++;
	lv->over[row->id] += row->used >= 1;
	if (row->id != RL_LVL_PREFIX) {
		if (!row->rule) {
			lv->used[row->id] = row->used;
			lv->has_used[row->id] = true;
		}
		return 0;
	}
	/* Kept sorted, most used first; the least falls off the end. */
	for (i = lv->ntop; i > 0 && lv->top[i - 1].used < row->used; i--)
		;
	if (i >= TOP_AGGREGATES)
		return 0;
	if (lv->ntop < TOP_AGGREGATES)
		lv->ntop++;
	memmove(&lv->top[i + 1], &lv->top[i], (size_t)(lv->ntop - 1 - i) * sizeof(lv->top[0]));
	a = &lv->top[i];
	rl_level_row_str(row, a->name, sizeof(a->name));
	snprintf(a->rule, sizeof(a->rule), "%s", row->rule ? row->rule->name : "default");
	a->used = row->used;
	return 0;
}

/* The levels of the limiter @pins whose live configuration is @cfg: rl_levels_walk(). */
static int read_levels(const struct rl_pins *pins, const struct rl_config *cfg,
		       struct leveldata *lv)
{
	struct rl_rules_cfg *rules = malloc(sizeof(*rules));
	int ret;

	if (!rules)
		return -ENOMEM;
	ret = rl_rules_read(pins, rules);
	if (!ret)
		ret = rl_levels_walk(pins, cfg, rules, level_one, lv);
	free(rules);
	return ret;
}

/* Read one limiter's maps through its pins. 0 or -errno. */
static int read_one(const struct rl_pinned *p, struct ifdata *d)
{
	struct rl_pins pins;
	struct count_ctx cc = {};
	char why[RL_ERRLEN];
	__u32 active;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	d->p = p;
	/* Checked, too: a limiter of another version would overrun our buffers. */
	ret = rl_pins_open_dir(p->pindir, &pins, why, sizeof(why));
	if (!ret)
		ret = rl_counters_read(&pins, &d->c);
	if (!ret)
		ret = rl_config_read(&pins, &d->cfg, &active);
	if (ret)
		goto out;
	/*
	 * The walk is the cost of a scrape: one batched lookup per 1024 sources
	 * in each table. A million IPv4 sources: about a thousand syscalls and
	 * 16 MB (8-byte key, 8-byte state each) copied out of the kernel, on one
	 * CPU. The packet path meets it only on the hash bucket locks the walk
	 * takes, one bucket at a time.
	 */
	cc.gen = d->cfg.gen;
	ret = rl_state_walk(&pins, count_one, &cc);
	if (ret)
		goto out;
	d->sources[0] = cc.n[0];
	d->sources[1] = cc.n[1];
	/*
	 * The IPv4 table in use: the sources asked for (a set of rl_sets4 or
	 * rl_wide4 per two), or rl_state4's entries.
	 */
	d->capacity[0] = d->cfg.table4 == RL_TABLE4_SA ?
				 max_entries(pins.sets4) * RL_SA_WAYS / RL_SA_SLOTS_PER_SOURCE :
			 d->cfg.table4 == RL_TABLE4_WIDE ?
				 max_entries(pins.wide4) * RL_SA_WAYS / RL_SA_SLOTS_PER_SOURCE :
				 max_entries(pins.state4);
	d->capacity[1] = rl_max_sources6(&pins);
	/*
	 * The pinned maps' memory, from their fdinfo: not rl_memory_read(),
	 * which also finds the program's own few maps through its interface,
	 * by netlink, which the exporter's unit does not allow (and the
	 * interface is in another namespace than the exporter's, mostly).
	 */
	for (size_t i = 0; i < RL_N_MAPS; i++) {
		__u64 b = 0;

		if (pins.fd[i] >= 0 && !rl_map_memlock(pins.fd[i], &b))
			d->memory += b;
	}
	ret = read_rules(&pins, d);
	if (!ret)
		ret = read_levels(&pins, &d->cfg, &d->lv);
	d->has_sync = !rl_sync_status_read(&pins, &d->sync);
out:
	rl_pins_close(&pins);
	return ret;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define R(f) offsetof(struct rl_rule_counters, f)

/* The per-rule counters, in families (label: NULL for none). */
static const struct {
	const char *name, *label, *help;
	size_t off;
} rule_counters[] = {
	{ "rule_packets_total", "verdict=\"passed\"",
	  "Frames a rule decided (not default: the interface's less the rules'), by XDP verdict.",
	  R(passed) },
	{ "rule_packets_total", "verdict=\"dropped\"", NULL, R(dropped) },
	{ "rule_bytes_total", "verdict=\"passed\"",
	  "Bytes of the frames a rule decided, by XDP verdict.", R(passed_bytes) },
	{ "rule_bytes_total", "verdict=\"dropped\"", NULL, R(dropped_bytes) },
	{ "rule_decided_packets_total", "reason=\"allowed\"",
	  "Frames a rule decided, by reason: allowed (allow rule), denied (deny rule), limited "
	  "(over a limit rule's rate), blocked (source blocked by --block), aggregate-limited and "
	  "iface-limited (over the limit of the rule's aggregate or whole).",
	  R(allowed) },
	{ "rule_decided_packets_total", "reason=\"denied\"", NULL, R(denied) },
	{ "rule_decided_packets_total", "reason=\"limited\"", NULL, R(limited) },
	{ "rule_decided_packets_total", "reason=\"blocked\"", NULL, R(blocked) },
	{ "rule_decided_packets_total", "reason=\"aggregate-limited\"", NULL, R(agg_limited) },
	{ "rule_decided_packets_total", "reason=\"iface-limited\"", NULL, R(iface_limited) },
	{ "rule_would_drop_packets_total", NULL,
	  "Frames a dry-run rule would have dropped (denied, limited or blocked), passed.",
	  R(would_drop) },
};

static unsigned long long rule_value(const struct ruledata *r, size_t off)
{
	return *(const __u64 *)((const char *)&r->c + off);
}

/* "xdp_ratelimit_NAME{iface=...,netns=...,rule="..."": the caller adds the rest. */
static void rule_sample(FILE *f, const char *name, const struct ifdata *d, const struct ruledata *r)
{
	sample(f, name, d);
	fputs(",rule=\"", f);
	label_value(f, r->name);
	fputc('"', f);
}

/*
 * Every rule's counters and, for limit rules (the only ones that keep
 * per-source states), the sources tracked and blocked. A limiter without
 * rules has no series here: no rule, nothing to count.
 */
static void print_rules(FILE *f, const struct ifdata *d, int n)
{
	for (size_t m = 0; m < sizeof(rule_counters) / sizeof(rule_counters[0]); m++) {
		if (m == 0 || strcmp(rule_counters[m].name, rule_counters[m - 1].name))
			family(f, rule_counters[m].name, "counter", rule_counters[m].help);
		for (int i = 0; i < n; i++)
			for (__u32 j = 0; j < d[i].nrules; j++) {
				rule_sample(f, rule_counters[m].name, &d[i], &d[i].rules[j]);
				if (rule_counters[m].label)
					fprintf(f, ",%s", rule_counters[m].label);
				fprintf(f, "} %llu\n",
					rule_value(&d[i].rules[j], rule_counters[m].off));
			}
	}
	family(f, "rule_sources", "gauge",
	       "Sources a limit rule tracks now (its own per-source states).");
	for (int i = 0; i < n; i++)
		for (__u32 j = 0; j < d[i].nrules; j++) {
			if (d[i].rules[j].action != RL_RULE_LIMIT)
				continue;
			rule_sample(f, "rule_sources", &d[i], &d[i].rules[j]);
			fprintf(f, "} %llu\n", (unsigned long long)d[i].rules[j].sources);
		}
	family(f, "blocked_sources", "gauge",
	       "Sources a limit rule with --block blocks now (see xdp-ratelimit blocked).");
	for (int i = 0; i < n; i++)
		for (__u32 j = 0; j < d[i].nrules; j++) {
			if (d[i].rules[j].action != RL_RULE_LIMIT)
				continue;
			rule_sample(f, "blocked_sources", &d[i], &d[i].rules[j]);
			fprintf(f, "} %llu\n", (unsigned long long)d[i].rules[j].blocked);
		}
}

/*
 * The levels above the source (include/rl_agg.h): their states by level, how
 * many are at or over their limit, the use of the interface's (and the
 * new sources') one state, and the most used aggregates, one series each.
 */
static void print_levels(FILE *f, const struct ifdata *d, int n)
{
	static const unsigned int ids[] = { RL_LVL_PREFIX, RL_LVL_IFACE, RL_LVL_NEW };

	family(f, "level_states", "gauge",
	       "States of the levels above the source now (an aggregate each, of the policy and "
	       "of limit rules; the interface's; the new sources'), by level.");
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			sample(f, "level_states", &d[i]);
			fprintf(f, ",level=\"%s\"} %llu\n", rl_level_name(ids[k]),
				(unsigned long long)d[i].lv.states[ids[k]]);
		}
	family(f, "level_over_limit", "gauge",
	       "Of those, the states at or over their limit now, by level.");
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
			sample(f, "level_over_limit", &d[i]);
			fprintf(f, ",level=\"%s\"} %llu\n", rl_level_name(ids[k]),
				(unsigned long long)d[i].lv.over[ids[k]]);
		}
	family(f, "level_used_ratio", "gauge",
	       "The share of its limit in use of the policy's one-state levels (iface: "
	       "--iface-rate; new: the new sources beyond --admit-rate); 1 and more: over it.");
	for (int i = 0; i < n; i++)
		for (unsigned int id = RL_LVL_IFACE; id <= RL_LVL_NEW; id++) {
			if (!d[i].lv.has_used[id])
				continue;
			sample(f, "level_used_ratio", &d[i]);
			fprintf(f, ",level=\"%s\"} %.4f\n", rl_level_name(id), d[i].lv.used[id]);
		}
	family(f, "aggregate_used_ratio", "gauge",
	       "The share of its limit in use of the most used aggregates (at most 10 per "
	       "limiter), by aggregate and rule; 1 and more: over it.");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < d[i].lv.ntop; k++) {
			sample(f, "aggregate_used_ratio", &d[i]);
			fputs(",aggregate=\"", f);
			label_value(f, d[i].lv.top[k].name);
			fputs("\",rule=\"", f);
			label_value(f, d[i].lv.top[k].rule);
			fprintf(f, "\"} %.4f\n", d[i].lv.top[k].used);
		}
}

static void print_gauges(FILE *f, const struct ifdata *d, int n)
{
	static const char *const fam[2] = { "ipv4", "ipv6" };
	static const char *const action[] = { "drop", "dry-run" };
	char rate[64];

	family(f, "sources", "gauge",
	       "Sources tracked now under the live configuration, by address family.");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			sample(f, "sources", &d[i]);
			fprintf(f, ",family=\"%s\"} %llu\n", fam[k],
				(unsigned long long)d[i].sources[k]);
		}
	family(f, "sources_capacity", "gauge",
	       "Sources the table is sized for (--max-sources, --max-sources6), by address family; "
	       "the set-associative IPv4 table has 4 slots per source and keeps idle ones, so "
	       "sources can be up to about 4 times this.");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			sample(f, "sources_capacity", &d[i]);
			fprintf(f, ",family=\"%s\"} %llu\n", fam[k],
				(unsigned long long)d[i].capacity[k]);
		}
	family(f, "memory_bytes", "gauge",
	       "Kernel memory the limiter's pinned maps take (bytes_memlock), allocated up front for "
	       "--max-sources; stats adds its program's few unpinned maps.");
	for (int i = 0; i < n; i++) {
		sample(f, "memory_bytes", &d[i]);
		fprintf(f, "} %llu\n", (unsigned long long)d[i].memory);
	}
	family(f, "config_info", "gauge", "The live policy, as labels; the value is always 1.");
	for (int i = 0; i < n; i++) {
		struct rl_policy pol;
		struct rl_opts o;

		rl_config_policy(&d[i].cfg, &pol, &o);
		rl_rate_str(&pol, rate, sizeof(rate));
		sample(f, "config_info", &d[i]);
		fprintf(f, ",algo=\"%s\",rate=\"", rl_algo_name(pol.algo));
		label_value(f, rate);
		fprintf(f, "\",action=\"%s\"} 1\n",
			d[i].cfg.action < 2 ? action[d[i].cfg.action] : "unknown");
	}
	family(f, "config_generation", "gauge",
	       "Generation of the live configuration: set increments it.");
	for (int i = 0; i < n; i++) {
		sample(f, "config_generation", &d[i]);
		fprintf(f, "} %u\n", d[i].cfg.gen);
	}
	print_rules(f, d, n);
	print_levels(f, d, n);
}

/* The sync agent's status (user/lib/sync_kern.h), for limiters where an agent ever ran. */
static void print_sync(FILE *f, const struct ifdata *d, int n)
{
#define SYNC_U64(name, type, help, field)                                                    \
	do {                                                                                 \
		family(f, name, type, help);                                                 \
		for (int i = 0; i < n; i++)                                                  \
			if (d[i].has_sync) {                                                 \
				sample(f, name, &d[i]);                                      \
				fprintf(f, "} %llu\n", (unsigned long long)d[i].sync.field); \
			}                                                                    \
	} while (0)
	family(f, "sync_up", "gauge",
	       "1 if the fleet sync agent runs and syncs with Redis, 0 otherwise.");
	for (int i = 0; i < n; i++)
		if (d[i].has_sync) {
			sample(f, "sync_up", &d[i]);
			fprintf(f, "} %d\n",
				d[i].sync.state == RL_SYNC_CONNECTED &&
					rl_sync_agent_alive(&d[i].sync));
		}
	family(f, "sync_state_info", "gauge",
	       "The sync agent's state, group, node and the Redis master it writes to, as labels; always 1.");
	for (int i = 0; i < n; i++)
		if (d[i].has_sync) {
			sample(f, "sync_state_info", &d[i]);
			fprintf(f, ",state=\"%s\",group=\"", rl_sync_state_name(&d[i].sync));
			label_value(f, d[i].sync.group);
			fprintf(f, "\",node=\"");
			label_value(f, d[i].sync.node);
			fprintf(f, "\",master=\"");
			label_value(f, d[i].sync.master);
			fprintf(f, "\"} 1\n");
		}
	family(f, "sync_last_success_timestamp_seconds", "gauge",
	       "Time of the sync agent's last successful round trip to Redis (0: never).");
	for (int i = 0; i < n; i++)
		if (d[i].has_sync) {
			sample(f, "sync_last_success_timestamp_seconds", &d[i]);
			fprintf(f, "} %.3f\n", (double)d[i].sync.last_sync_ns / 1e9);
		}
	family(f, "sync_lag_seconds", "gauge", "Duration of the sync agent's last round trip.");
	for (int i = 0; i < n; i++)
		if (d[i].has_sync) {
			sample(f, "sync_lag_seconds", &d[i]);
			fprintf(f, "} %.6f\n", (double)d[i].sync.lag_ns / 1e9);
		}
	SYNC_U64("sync_sources_active", "gauge",
		 "Sources that passed traffic in the last interval.", sources_active);
	SYNC_U64("sync_sources_shared", "gauge",
		 "Sources of the last interval that other nodes of the group saw too.",
		 sources_shared);
	SYNC_U64("sync_nodes", "gauge", "Nodes of the sync group seen lately, this one included.",
		 nodes);
	SYNC_U64("sync_syncs_total", "counter", "Successful round trips to Redis.", syncs_total);
	SYNC_U64("sync_errors_total", "counter", "Failed round trips to Redis.", errors_total);
	SYNC_U64("sync_fallback_intervals_total", "counter",
		 "Intervals spent in fallback (Redis failing).", fallback_intervals_total);
	SYNC_U64("sync_charged_units_total", "counter",
		 "Cost units charged into local states for other nodes' traffic.",
		 charged_units_total);
	SYNC_U64("sync_redis_tx_bytes_total", "counter", "Bytes sent to Redis.",
		 redis_tx_bytes_total);
	SYNC_U64("sync_redis_rx_bytes_total", "counter", "Bytes received from Redis.",
		 redis_rx_bytes_total);
#undef SYNC_U64
}

int rl_metrics_render(char **out, size_t *len)
{
	struct rl_pinned *pinned = NULL;
	struct ifdata *d = NULL;
	struct member *mem = NULL;
	int npinned, n = 0, nmem = 0, orphans = 0, errors = 0, ret = 0;
	double t0 = now_s();
	FILE *f;

	*out = NULL;
	*len = 0;
	/*
	 * Sized for what is there, grown until it all fits: a fixed array for
	 * the most a host could have would be megabytes per scrape, and glibc
	 * keeps such blocks in each thread's arena (one per connection thread).
	 */
	for (int cap = 16;; cap *= 2) {
		free(pinned);
		pinned = calloc((size_t)cap, sizeof(*pinned));
		if (!pinned) {
			ret = -ENOMEM;
			goto out;
		}
		npinned = rl_list_pinned(pinned, cap);
		if (npinned < cap || cap >= MAX_PINNED)
			break;
	}
	d = calloc((size_t)npinned + 1, sizeof(*d));
	if (!d) {
		ret = -ENOMEM;
		goto out;
	}
	mem = calloc((size_t)npinned + 1, sizeof(*mem));
	if (!mem) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < npinned; i++) {
		__u32 id;
		int j;

		/* An orphan's counters stopped when its program went: not a limiter. */
		if (pinned[i].orphan) {
			orphans++;
			continue;
		}
		/*
		 * Interfaces that share a limiter share its counters: one series
		 * per limiter, under the first of its interfaces by name (summing
		 * over iface must not count a packet twice), and an info series
		 * per other member.
		 */
		id = rl_pins_id(pinned[i].pindir);
		for (j = 0; id && j < n && d[j].limiter != id; j++)
			;
		if (id && j < n) {
			mem[nmem].p = &pinned[i];
			mem[nmem++].of = j;
			if (strcmp(pinned[i].name, d[j].p->name) < 0) {
				mem[nmem - 1].p = d[j].p;
				d[j].p = &pinned[i];
			}
			continue;
		}
		if (read_one(&pinned[i], &d[n])) {
			errors++; /* detached while we read it, most likely */
			free(d[n].rules);
		} else {
			d[n++].limiter = id;
		}
	}
	f = open_memstream(out, len);
	if (!f) {
		ret = -errno;
		goto out;
	}
	print_counters(f, d, n);
	print_gauges(f, d, n);
	print_sync(f, d, n);
	family(f, "shares_limiter_info", "gauge",
	       "An interface that shares the limiter of another (attach --share): its packets are "
	       "counted in the series of the interface named by limiter; always 1.");
	for (int i = 0; i < nmem; i++) {
		struct ifdata m = { .p = mem[i].p };

		sample(f, "shares_limiter_info", &m);
		fprintf(f, ",limiter=\"");
		label_value(f, d[mem[i].of].p->name);
		fprintf(f, "\"} 1\n");
	}
	family(f, "interfaces", "gauge", "Interfaces with a live limiter, in every namespace.");
	fprintf(f, "xdp_ratelimit_interfaces %d\n", n + nmem);
	family(f, "orphaned_pins", "gauge",
	       "Pin directories whose maps no program uses (see xdp-ratelimit cleanup).");
	fprintf(f, "xdp_ratelimit_orphaned_pins %d\n", orphans);
	family(f, "scrape_errors", "gauge",
	       "Limiters this scrape could not read (detached while it read them, most likely).");
	fprintf(f, "xdp_ratelimit_scrape_errors %d\n", errors);
	family(f, "scrape_duration_seconds", "gauge",
	       "Time this scrape took to read every limiter's maps.");
	fprintf(f, "xdp_ratelimit_scrape_duration_seconds %.6f\n", now_s() - t0);
	if (fclose(f)) {
		ret = -errno;
		free(*out);
		*out = NULL;
		*len = 0;
	}
out:
	for (int i = 0; d && i < n; i++)
		free(d[i].rules);
	free(pinned);
	free(mem);
	free(d);
	return ret;
}

int rl_listen_parse(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	const char *colon = strrchr(s, ':');
	struct addrinfo *res = NULL, *pick = NULL;
	char host[256];
	size_t hl = colon ? (size_t)(colon - s) : 0;
	__u64 port;
	int ret;

	memset(ss, 0, sizeof(*ss));
	if (!colon || hl >= sizeof(host) || rl_parse_u64(colon + 1, 0, 65535, &port, err, errlen)) {
		snprintf(err, errlen, "'%s' is not ADDR:PORT (127.0.0.1:%d, [::]:%d, localhost:%d)",
			 s, RL_EXPORTER_PORT, RL_EXPORTER_PORT, RL_EXPORTER_PORT);
		return -EINVAL;
	}
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		host[hl - 1] = '\0';
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((__u16)port);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1)
			return 0;
		snprintf(err, errlen, "'%s' is not an IPv6 address", host + 1);
		return -EINVAL;
	}
	if (!hl) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		/* No address: INADDR_ANY. */
		a4->sin_family = AF_INET;
		a4->sin_port = htons((__u16)port);
		return 0;
	}
	/* An IPv6 address needs its brackets: "::1:9977" would be ambiguous. */
	if (strchr(host, ':') || host[0] == '[') {
		snprintf(err, errlen,
			 "'%s' is not an IPv4 address, a host name or an IPv6 address "
			 "in brackets",
			 host);
		return -EINVAL;
	}
	/* Digits and dots are an IPv4 address, whole: getaddrinfo() would take "1.2.3". */
	if (strspn(host, "0123456789.") == hl) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		a4->sin_family = AF_INET;
		a4->sin_port = htons((__u16)port);
		if (inet_pton(AF_INET, host, &a4->sin_addr) == 1)
			return 0;
		snprintf(err, errlen, "'%s' is not an IPv4 address", host);
		return -EINVAL;
	}
	/*
	 * A name: what it resolves to. Like Go's
	 * net.Listen (node_exporter's --web.listen-address), one address: the
	 * first IPv4 one, else the first IPv6 one ("localhost" is 127.0.0.1).
	 */
	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "'%s' is not an address or a host name that resolves: %s",
			 host, ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -EINVAL;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET || (!pick && ai->ai_family == AF_INET6)) {
			pick = ai;
			if (ai->ai_family == AF_INET)
				break;
		}
	if (!pick || pick->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		snprintf(err, errlen, "'%s' resolves to no IPv4 or IPv6 address", host);
		return -EINVAL;
	}
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((__u16)port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((__u16)port);
	freeaddrinfo(res);
	return 0;
}
